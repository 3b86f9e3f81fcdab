import { describe, expect, it } from 'vitest';
import { loadMigrations } from '../../shared/platform/db/migrate';

/** Statements a migration may run while the previous deploy's code still serves (see shared/platform/db/migrations/README.md). */
function contractingStatements(sql: string): string[] {
  const statements = sql
    .replace(/--[^\n]*/g, '')
    .split(';')
    .map((s) => s.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
  return statements.filter((statement) => {
    if (/^(DROP|RENAME|TRUNCATE)\b/i.test(statement)) return true;
    if (/^ALTER TABLE\b/i.test(statement)) {
      // Every clause of an ALTER must add something the old code can ignore.
      return statement
        .replace(/^ALTER TABLE \S+ /i, '')
        .split(/,(?![^()]*\))/)
        .some((clause) => !/^\s*ADD\b/i.test(clause) || (/^\s*ADD (COLUMN )?(?!INDEX|KEY|UNIQUE|CONSTRAINT|FULLTEXT)/i.test(clause) && /\bNOT NULL\b/i.test(clause) && !/\bDEFAULT\b/i.test(clause)));
    }
    if (/^(UPDATE|DELETE)\b/i.test(statement)) return false;
    return !/^(CREATE (TABLE|INDEX|UNIQUE INDEX)|INSERT)\b/i.test(statement);
  });
}

const CONTRACT_HEADER = /^-- contract: .+, unused since .+$/m;

describe('migrations', () => {
  it('only expand, unless a file says what it contracts and since when it is unused', async () => {
    // Prepare
    const migrations = await loadMigrations();

    // Act
    const offending = migrations.filter((m) => contractingStatements(m.sql).length > 0 && !CONTRACT_HEADER.test(m.sql)).map((m) => m.name);

    // Assess
    expect(offending).toEqual([]);
  });

  it('the rule catches what would break the running code', () => {
    expect(contractingStatements('ALTER TABLE orders DROP COLUMN quantity;')).toHaveLength(1);
    expect(contractingStatements('ALTER TABLE orders ADD COLUMN note VARCHAR(10) NOT NULL;')).toHaveLength(1);
    expect(contractingStatements('ALTER TABLE orders CHANGE quantity qty INT;')).toHaveLength(1);
    expect(contractingStatements('ALTER TABLE orders ADD COLUMN note VARCHAR(10) NULL, MODIFY id VARCHAR(10);')).toHaveLength(1);
    expect(contractingStatements('DROP TABLE orders;')).toHaveLength(1);
    expect(contractingStatements('RENAME TABLE a TO b;')).toHaveLength(1);
    expect(contractingStatements("ALTER TABLE orders ADD COLUMN note VARCHAR(10) NOT NULL DEFAULT '', ADD INDEX by_note (note);")).toEqual([]);
    expect(contractingStatements('CREATE TABLE t (id INT NOT NULL, PRIMARY KEY (id)); CREATE INDEX i ON t (id);')).toEqual([]);
  });
});
