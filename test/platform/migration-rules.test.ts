import { describe, expect, it } from 'vitest';
import { loadMigrations } from '../../shared/platform/db/migrate';

const ENUM_VALUES = /ENUM\s*\(([^)]*)\)/i;
const enumValues = (definition: string) =>
  ENUM_VALUES.exec(definition)![1]!
    .split(',')
    .map((v) => v.trim());

/** The ENUM a column was last given in these migrations' SQL (created or modified), as its values. */
function lastEnum(sql: string, table: string, column: string): string[] | undefined {
  let values: string[] | undefined;
  const created = new RegExp(`CREATE TABLE ${table} \\(([\\s\\S]*?)\\) ENGINE`, 'gi');
  for (const [, body] of sql.matchAll(created)) {
    const line = new RegExp(`^\\s*${column}\\s+ENUM\\s*\\([^)]*\\)`, 'im').exec(body!);
    if (line) values = enumValues(line[0]);
  }
  const modified = new RegExp(`ALTER TABLE ${table} MODIFY (COLUMN )?${column} (ENUM\\s*\\([^)]*\\))`, 'gi');
  for (const match of sql.matchAll(modified)) values = enumValues(match[2]!);
  return values;
}

/**
 * A MODIFY that only appends values to a column's ENUM: the stored values keep their meaning (and
 * InnoDB changes only the definition), so the running code reads every row it wrote as before.
 */
function appendsToEnum(table: string, clause: string, earlierSql: string): boolean {
  const match = /^\s*MODIFY (COLUMN )?(\w+) (ENUM\s*\([^)]*\)) NOT NULL\s*$/i.exec(clause);
  if (!match) return false;
  const before = lastEnum(earlierSql, table, match[2]!);
  const after = enumValues(match[3]!);
  return before !== undefined && after.length > before.length && before.every((value, i) => after[i] === value);
}

/**
 * Statements a migration may run while the previous deploy's code still serves (see
 * shared/platform/db/migrations/README.md); earlierSql is every migration before it.
 */
function contractingStatements(sql: string, earlierSql = ''): string[] {
  const statements = sql
    .replace(/--[^\n]*/g, '')
    .split(';')
    .map((s) => s.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
  return statements.filter((statement) => {
    if (/^(DROP|RENAME|TRUNCATE)\b/i.test(statement)) return true;
    if (/^ALTER TABLE\b/i.test(statement)) {
      // Every clause of an ALTER must add something the old code can ignore.
      const table = /^ALTER TABLE (\S+) /i.exec(statement)![1]!;
      return statement
        .replace(/^ALTER TABLE \S+ /i, '')
        .split(/,(?![^()]*\))/)
        .some((clause) =>
          appendsToEnum(table, clause, earlierSql)
            ? false
            : !/^\s*ADD\b/i.test(clause) ||
              (/^\s*ADD (COLUMN )?(?!INDEX|KEY|UNIQUE|CONSTRAINT|FULLTEXT)/i.test(clause) && /\bNOT NULL\b/i.test(clause) && !/\bDEFAULT\b/i.test(clause)),
        );
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
    const earlierThan = (i: number) =>
      migrations
        .slice(0, i)
        .map((m) => m.sql)
        .join('\n');
    const offending = migrations.filter((m, i) => contractingStatements(m.sql, earlierThan(i)).length > 0 && !CONTRACT_HEADER.test(m.sql)).map((m) => m.name);

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
    const created = "CREATE TABLE orders (\n  id INT NOT NULL,\n  status ENUM('confirmed', 'rejected') NOT NULL\n) ENGINE = InnoDB;";
    expect(contractingStatements("ALTER TABLE orders MODIFY status ENUM('confirmed', 'rejected', 'promised') NOT NULL;", created)).toEqual([]);
    expect(contractingStatements("ALTER TABLE orders MODIFY status ENUM('rejected', 'confirmed', 'promised') NOT NULL;", created)).toHaveLength(1);
    expect(contractingStatements("ALTER TABLE orders MODIFY status ENUM('confirmed') NOT NULL;", created)).toHaveLength(1);
    expect(contractingStatements("ALTER TABLE orders MODIFY status ENUM('confirmed', 'rejected', 'promised') NULL;", created)).toHaveLength(1);
  });
});
