import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, normalize } from 'node:path';
import { cruise, type ICruiseOptions, type IViolation } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import { afterAll, describe, expect, it } from 'vitest';

/** The house's rules as `.dependency-cruiser.cjs` states them, read as `npx depcruise` reads them. */
const rules = (): Promise<ICruiseOptions> => extractDepcruiseOptions('./.dependency-cruiser.cjs');

/** Each rule broken, with the files (path → source) that break it. */
const PLANTED: Record<string, Record<string, string>> = {
  'no-cycle': { 'load/a.ts': "import { b } from './b';\nexport const a = b;", 'load/b.ts': "import { a } from './a';\nexport const b = () => a;" },
  'no-folder-cycle-in-shared': {
    // Inside one capability: between two, the capabilities' order already forbids one of the two directions.
    'shared/platform/http/answer.ts': "import { pool } from '../db/pool';\nexport const answer = pool;",
    'shared/platform/db/pool.ts': "export const pool = 1;\nexport { header } from '../http/header';",
    'shared/platform/http/header.ts': 'export const header = 1;',
  },
  'shared-stands-alone': {
    'shared/mail/retention.ts': "export { functions } from '../../functions/table';",
    'functions/table.ts': 'export const functions = [];',
  },
  'platform-below-capabilities': {
    'shared/platform/http/api.ts': "export { session } from '../../sessions/store';",
    'shared/sessions/store.ts': 'export const session = 1;',
  },
  'capabilities-in-order-1': {
    'shared/reservations/place.ts': "export { kind } from '../coupons/kind';",
    'shared/coupons/kind.ts': 'export const kind = 1;',
  },
  'capabilities-in-order-2': {
    'shared/mail/inbox.ts': "export { session } from '../sessions/store';",
    'shared/sessions/store.ts': 'export const session = 1;',
  },
  'capabilities-in-order-3': {
    'shared/api/api.ts': "export { reserve } from '../sale/orders/sale';",
    'shared/sale/orders/sale.ts': 'export const reserve = 1;',
  },
  'orders-know-no-room': { 'shared/sale/orders/sale.ts': "export { pass } from '../rooms/rooms';", 'shared/sale/rooms/rooms.ts': 'export const pass = 1;' },
  'no-test-below-test': { 'load/bench.ts': "export { until } from '../test/support/wait';", 'test/support/wait.ts': 'export const until = 1;' },
  'infra-not-load': { 'infra/ops/redrive.ts': "export { twin } from '../../load/support/twin';", 'load/support/twin.ts': 'export const twin = 1;' },
  'entry-files-import-shared': { 'functions/get-me.ts': "export { other } from './get-order';", 'functions/get-order.ts': 'export const other = 1;' },
};

const planted: string[] = [];
afterAll(() => planted.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** The rules broken by a tree of the given files, cruised with the house's rules from a folder of its own. */
async function brokenIn(files: Record<string, string>): Promise<string[]> {
  const root = mkdtempSync(join(tmpdir(), 'layers-'));
  planted.push(root);
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), source);
  }
  const { tsConfig: _projectOnly, ...options } = await rules();
  const cwd = process.cwd();
  process.chdir(root);
  try {
    return violationsOf(await cruise(['.'], { ...options, baseDir: root }));
  } finally {
    process.chdir(cwd);
  }
}

/** A Lua script's includes (`--- @include "<path>"`, shared/platform/redis/script.ts) as imports: from → to, paths from the tree's root. */
function luaIncludes(root: string): { from: string; to: string }[] {
  return readdirSync(join(root, 'shared'), { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.lua'))
    .flatMap((path) => {
      const from = `shared/${path}`;
      return [...readFileSync(join(root, from), 'utf8').matchAll(/^--- @include "([^"]+)"$/gm)].map((m) => ({
        from,
        to: normalize(join(dirname(from), m[1]!)),
      }));
    });
}

/** The house's path rules applied to the Lua includes as dependency-cruiser applies them to imports (cycles are the scripts' own business: an include goes in once). */
async function luaViolationsIn(root: string): Promise<string[]> {
  type PathRule = { name: string; from: { path?: string; pathNot?: string }; to: { path?: string; pathNot?: string; circular?: boolean } };
  const { ruleSet } = (await rules()) as unknown as { ruleSet: { forbidden: PathRule[] } };
  return luaIncludes(root).flatMap(({ from, to }) =>
    ruleSet.forbidden
      .filter((rule) => rule.to.path !== undefined && !rule.to.circular)
      .filter((rule) => {
        const groups = new RegExp(rule.from.path ?? '').exec(from);
        if (!groups || (rule.from.pathNot && new RegExp(rule.from.pathNot).test(from))) return false;
        const withGroups = (pattern: string) => pattern.replace(/\$(\d)/g, (_, i: string) => groups[Number(i)] ?? '');
        return new RegExp(withGroups(rule.to.path!)).test(to) && !(rule.to.pathNot && new RegExp(withGroups(rule.to.pathNot)).test(to));
      })
      .map((rule) => `${rule.name}: ${from} → ${to}`),
  );
}

function violationsOf(result: Awaited<ReturnType<typeof cruise>>): string[] {
  if (typeof result.output === 'string') throw new Error('dependency-cruiser gave text, not a result');
  return result.output.summary.violations.map((v: IViolation) => `${v.rule.name}: ${v.from} → ${v.to}`);
}

describe('layers', () => {
  it('hold in the tree: functions/ → shared/ → shared/platform/, infra/ and load/ beside them, test/ above all, no cycle', async () => {
    // Act
    const violations = violationsOf(await cruise(['shared', 'functions', 'infra', 'load', 'test'], await rules()));

    // Assess
    expect(violations).toEqual([]);
  });

  it('hold for the Lua scripts’ includes, read as imports', async () => {
    // Prepare
    const includes = luaIncludes('.');

    // Act
    const violations = await luaViolationsIn('.');

    // Assess: scripts include across capabilities (the rates' GCRA, the buckets' take-in), within the order
    expect(includes.length).toBeGreaterThan(5);
    expect(includes.every(({ to }) => to.startsWith('shared/'))).toBe(true);
    expect(violations).toEqual([]);
  });

  it('would catch a Lua include against the capabilities’ order', async () => {
    // Prepare: the rates' script including a file of the sale, above it
    const root = mkdtempSync(join(tmpdir(), 'layers-lua-'));
    planted.push(root);
    mkdirSync(join(root, 'shared/limits/lua'), { recursive: true });
    mkdirSync(join(root, 'shared/sale/orders/lua'), { recursive: true });
    writeFileSync(join(root, 'shared/limits/lua/rate-take-1.lua'), '--- @include "../../sale/orders/lua/stock.lua"\nreturn 1\n');
    writeFileSync(join(root, 'shared/sale/orders/lua/stock.lua'), 'local stock = 1\n');

    // Act
    const violations = await luaViolationsIn(root);

    // Assess
    expect(violations).toEqual(['capabilities-in-order-1: shared/limits/lua/rate-take-1.lua → shared/sale/orders/lua/stock.lua']);
  });

  it.each(Object.keys(PLANTED))('would catch a violation of %s', async (rule) => {
    // Act
    const violations = await brokenIn(PLANTED[rule]!);

    // Assess
    expect(
      violations.some((v) => v.startsWith(`${rule}:`)),
      violations.join('\n'),
    ).toBe(true);
  });
});
