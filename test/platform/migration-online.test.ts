/**
 * Every migration is safe to run while a sale runs on Aurora MySQL 3 (shared/platform/db/migrations/
 * README.md), checked on MariaDB where MariaDB can check it: each statement that alters a table
 * that exists is run with the algorithm and lock its kind must get, and one MariaDB refuses to run
 * so is a table copy or a lock over the table:
 * - ADD COLUMN (nullable, or with a default) and appending values to an ENUM: ALGORITHM=INSTANT
 *   (metadata only; MySQL 8.0 and MariaDB 10.3+ alike);
 * - CREATE INDEX / ADD INDEX: ALGORITHM=INPLACE, LOCK=NONE (built while reads and writes go on);
 * - anything else that alters a table (a MODIFY of a column's type, a CHECK constraint added, which
 *   both engines copy the table for) is refused here.
 * Data changes on a table a sale writes (HOT_TABLES) must name the rows they touch (a WHERE), and a
 * move of data into a new home (INSERT … SELECT from another table) must have its bridge in the code
 * (BRIDGES): the previous release reads and writes the old home while the deploy shifts. Contract
 * steps (a `-- contract:` header, see migration-rules.test.ts) are checked there, not here.
 */
import { createConnection, type Connection } from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations, type Migration } from '../../shared/platform/db/migrate';
import { orderDecisions } from '../../shared/sale/orders/kind';
import type { DecisionColumns } from '../../shared/reservations/ledger';

/** Tables a sale writes every second: a lock over one stops the sale. */
const HOT_TABLES = ['items', 'orders', 'deals', 'coupons', 'reservation_ledger'];

/**
 * The bridge of each migration that moved data the release before reads and writes into a new home:
 * what this release reads and writes beside the new home. Ends with a later migration saying
 * `-- ends the bridge of <migration>` (the contract that drops the old home).
 */
const BRIDGES: Record<string, { from: string; into: string; bridge: () => DecisionColumns | undefined }> = {
  '0014-orders-hold-their-decisions.sql': { from: 'reservation_ledger', into: 'orders', bridge: () => orderDecisions.bridge },
};

/**
 * Released before this rule, applied everywhere, and append-only: what each did that the rule
 * refuses now, and why it is left. Any new finding fails.
 */
const RELEASED_BEFORE_THE_RULE: Record<string, string[]> = {
  // The ledger was built from the stored orders and coupons before any code read it, and deals were
  // copied once, small; no release had served a sale when it ran.
  '0007-reservation-ledger.sql': [
    "a move from orders into reservation_ledger with no bridge in the code: INSERT INTO reservation_ledger (id, kind, owner_id, buyer_id, units, state) SELECT id, 'order', item_id, user_id, quantity, status FROM orders",
    "a move from coupons into reservation_ledger with no bridge in the code: INSERT INTO reservation_ledger (id, kind, owner_id, buyer_id, units, state) SELECT id, 'coupon', deal_id, user_id, 1, 'confirmed' FROM coupons",
    'UPDATE of hot table deals with no WHERE: UPDATE deals SET issued = (SELECT COUNT(*) FROM coupons WHERE coupons.deal_id = deals.id)',
    'table copy or lock: ALTER TABLE deals ADD CONSTRAINT deals_not_overissued CHECK (issued <= coupon_limit)',
  ],
};

const statementsOf = (sql: string) =>
  sql
    .replace(/--[^\n]*/g, '')
    .split(';')
    .map((s) => s.replace(/\s+/g, ' ').trim())
    .filter(Boolean);

/** The statement with the algorithm and lock its kind must get, or undefined for one that alters no existing table. */
function online(statement: string): string | undefined {
  if (/^CREATE (UNIQUE )?INDEX\b/i.test(statement)) return `${statement} ALGORITHM=INPLACE LOCK=NONE`;
  if (!/^ALTER TABLE\b/i.test(statement)) return undefined;
  const clauses = statement.replace(/^ALTER TABLE \S+ /i, '').split(/,(?![^()]*\))/);
  if (clauses.every((c) => /^\s*ADD (UNIQUE )?(INDEX|KEY)\b/i.test(c))) return `${statement}, ALGORITHM=INPLACE, LOCK=NONE`;
  // ADD COLUMN, and a MODIFY that only appends to an ENUM (migration-rules.test.ts holds that): metadata only.
  return `${statement}, ALGORITHM=INSTANT`;
}

/** What a data change on a hot table must say: which rows (a WHERE); and a move from another table, its bridge. */
function dataFindings(migration: Migration, statement: string, endedBridges: Set<string>): string[] {
  const findings: string[] = [];
  const updated = /^(?:UPDATE|DELETE FROM) (\w+)/i.exec(statement)?.[1];
  let outer = statement;
  while (/\([^()]*\)/.test(outer)) outer = outer.replace(/\([^()]*\)/g, '');
  if (updated && HOT_TABLES.includes(updated) && !/\bWHERE\b/i.test(outer)) findings.push(`UPDATE of hot table ${updated} with no WHERE: ${statement}`);
  const moved = /^INSERT (?:IGNORE )?INTO (\w+)\b.*?\bSELECT\b.*?\bFROM (\w+)/i.exec(statement);
  if (moved && moved[1] !== moved[2] && HOT_TABLES.includes(moved[2]!) && !endedBridges.has(migration.name)) {
    const declared = BRIDGES[migration.name];
    const bridge = declared?.bridge();
    if (!declared || declared.into !== moved[1] || declared.from !== moved[2] || bridge?.table !== moved[2])
      findings.push(`a move from ${moved[2]} into ${moved[1]} with no bridge in the code: ${statement}`);
  }
  return findings;
}

/**
 * Runs every migration in order on a scratch database, each statement that alters an existing table
 * in its online form (see online()); one MariaDB refuses is a finding, then run as written so the
 * next migrations see the schema they expect. Returns the findings by migration.
 */
async function findingsOf(conn: Connection, migrations: Migration[]): Promise<Record<string, string[]>> {
  const ended = new Set(migrations.flatMap((m) => [...m.sql.matchAll(/^-- ends the bridge of (\S+)$/gm)].map((match) => match[1]!)));
  const findings: Record<string, string[]> = {};
  for (const migration of migrations) {
    const contract = /^-- contract: /m.test(migration.sql);
    for (const statement of statementsOf(migration.sql)) {
      const found = contract ? [] : dataFindings(migration, statement, ended);
      const checked = contract ? undefined : online(statement);
      if (checked) {
        try {
          await conn.query(checked);
        } catch {
          found.push(`table copy or lock: ${statement}`);
          await conn.query(statement);
        }
      } else {
        await conn.query(statement);
      }
      if (found.length) (findings[migration.name] ??= []).push(...found);
    }
  }
  return findings;
}

describe('migrations, online', () => {
  let admin: Connection;
  let scratch: Connection;
  const database = `surge_online_${Date.now().toString(36)}`;

  beforeAll(async () => {
    admin = await createConnection({ uri: process.env.DATABASE_URL! });
    await admin.query(`CREATE DATABASE ${database}`);
    const url = new URL(process.env.DATABASE_URL!);
    url.pathname = `/${database}`;
    scratch = await createConnection({ uri: url.toString() });
  });
  afterAll(async () => {
    await scratch?.end();
    await admin?.query(`DROP DATABASE IF EXISTS ${database}`);
    await admin?.end();
  });

  it('run while a sale does: no table copy, no lock over a table, no unbounded write to a hot table, every move bridged', async () => {
    // Prepare
    const migrations = await loadMigrations();

    // Act
    const findings = await findingsOf(scratch, migrations);

    // Assess: nothing but what was released before the rule.
    expect(findings).toEqual(RELEASED_BEFORE_THE_RULE);
  });

  it('refuse a MODIFY of a hot column, a CHECK added to a hot table, an unbounded update, and 0014 without its bridge', async () => {
    // Prepare: the schema as the migrations leave it (the test above built it), and planted migrations.
    const planted = (name: string, sql: string): Migration => ({ version: 9_000, name, sql, checksum: '' });
    const bridge = BRIDGES['0014-orders-hold-their-decisions.sql']!;
    const [move] = (await loadMigrations())
      .filter((m) => m.name === '0014-orders-hold-their-decisions.sql')
      .map((m) => statementsOf(m.sql).find((s) => /^INSERT/i.test(s))!);

    // Act
    const modify = await findingsOf(scratch, [planted('9000-modify.sql', 'ALTER TABLE orders MODIFY quantity BIGINT UNSIGNED NOT NULL;')]);
    const check = await findingsOf(scratch, [planted('9001-check.sql', 'ALTER TABLE items ADD CONSTRAINT items_some_stock CHECK (initial_stock >= 0);')]);
    const update = dataFindings(planted('9002-update.sql', ''), "UPDATE orders SET status = 'confirmed'", new Set());
    const bridged = dataFindings(await loadMigrations().then((all) => all.find((m) => m.name === '0014-orders-hold-their-decisions.sql')!), move!, new Set());
    const saved = bridge.bridge;
    bridge.bridge = () => undefined;
    const unbridged = dataFindings(await loadMigrations().then((all) => all.find((m) => m.name === '0014-orders-hold-their-decisions.sql')!), move!, new Set());
    bridge.bridge = saved;

    // Assess
    expect(modify['9000-modify.sql']).toEqual([expect.stringMatching(/^table copy or lock: ALTER TABLE orders MODIFY quantity/)]);
    expect(check['9001-check.sql']).toEqual([expect.stringMatching(/^table copy or lock: ALTER TABLE items ADD CONSTRAINT/)]);
    expect(update).toEqual([expect.stringMatching(/^UPDATE of hot table orders with no WHERE/)]);
    expect(bridged).toEqual([]);
    expect(unbridged).toEqual([expect.stringMatching(/^a move from reservation_ledger into orders with no bridge in the code/)]);
  });
});
