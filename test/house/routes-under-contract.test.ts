import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { functions } from '../../functions/table';

/*
 * A test calls a route's handler through test/support/routes.ts, which holds each answer to the
 * API's contract; importing the entry itself would skip that check. Only the files that read an
 * entry's declarations, not its answers, import entries: the document's own test and the check
 * that entries import without an environment.
 */

const ROUTE_IDS = new Set(functions.flatMap((spec) => (spec.trigger.kind === 'http' ? [spec.id] : [])));
const READS_DECLARATIONS_ONLY = new Set(['test/api/openapi-document.test.ts', 'test/support/routes.ts', 'test/support/import-entries.ts']);
/** This file's own sample import, which the first test reads. */
const SELF = 'test/house/routes-under-contract.test.ts';

/** The route entries a source imports by a static path. */
const routeImports = (source: string) =>
  [...source.matchAll(/from '(?:\.\.\/)+functions\/([a-z-]+)'/g)].map((match) => match[1]!).filter((id) => ROUTE_IDS.has(id));

const testFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? testFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );

describe('route handlers in tests', () => {
  it('finds an entry imported past the contract', () => {
    expect(routeImports("import { handler as getMe } from '../../functions/get-me';\nimport { functions } from '../../functions/table';")).toEqual(['get-me']);
  });

  it('are called through test/support/routes.ts, which holds their answers to the contract', () => {
    const pastTheContract = testFiles('test')
      .filter((file) => !READS_DECLARATIONS_ONLY.has(file) && file !== SELF)
      .flatMap((file) => routeImports(readFileSync(file, 'utf8')).map((id) => `${file} imports functions/${id}`));

    expect(pastTheContract).toEqual([]);
  });
});
