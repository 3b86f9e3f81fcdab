import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cruise, type ICruiseOptions, type IViolation } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import { afterAll, describe, expect, it } from 'vitest';

/** The house's rules as `.dependency-cruiser.cjs` states them, read as `npx depcruise` reads them. */
const rules = (): Promise<ICruiseOptions> => extractDepcruiseOptions('./.dependency-cruiser.cjs');

/** Each rule broken, with the files (path → source) that break it. */
const PLANTED: Record<string, Record<string, string>> = {
  'no-cycle': { 'load/a.ts': "import { b } from './b';\nexport const a = b;", 'load/b.ts': "import { a } from './a';\nexport const b = () => a;" },
  'no-folder-cycle-in-shared': {
    'shared/orders/sale.ts': "import { hold } from '../reservations/hold';\nexport const sale = hold;",
    'shared/reservations/hold.ts': "export const hold = 1;\nexport { kind } from '../orders/kind';",
    'shared/orders/kind.ts': 'export const kind = 1;',
  },
  'shared-stands-alone': {
    'shared/mail/retention.ts': "export { functions } from '../../functions/table';",
    'functions/table.ts': 'export const functions = [];',
  },
  'platform-below-capabilities': {
    'shared/platform/http/api.ts': "export { session } from '../../sessions/store';",
    'shared/sessions/store.ts': 'export const session = 1;',
  },
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
