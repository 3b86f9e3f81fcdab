/**
 * What each function's bundle carries, read from esbuild's metafile with the stack's options: a
 * heavy module enters only the bundles of functions that reach it. Every module a bundle carries
 * is compiled, most are evaluated, at each cold start (`npm run bundles`, `npm run bench -- opening`).
 */
import { resolve } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { functions } from '../../functions/table';
import { besideModules, ESBUILD_OPTIONS } from '../../infra/bundling';
import { envNeeds } from '../../shared/platform/config';

const root = resolve(import.meta.dirname, '../..');

/** Heavy modules, by the paths of their files in a metafile. */
const HEAVY = {
  /** ~310 KB, ~60 ms of a cold start: no function's bundle carries it, each that asks MySQL loads it from beside itself. */
  'the MySQL driver': /(^|\/)node_modules\/mysql2\//,
  /** A full AWS SDK client: ~180 KB, ~50 ms. */
  'an AWS SDK client': /(^|\/)node_modules\/@aws-sdk\/client-/,
  /** The API document's builder and its linter: the published document is a file beside its two functions. */
  'the OpenAPI tooling': /(^|\/)(node_modules\/@redocly\/|infra\/openapi\/)/,
} as const;
type Heavy = keyof typeof HEAVY;
const ALL = Object.keys(HEAVY) as Heavy[];

/**
 * The functions held to carrying none of some heavy modules, and why they need none: those that
 * answer from Redis alone carry none; those that hand off to SQS do it by SQS's JSON protocol
 * (shared/platform/clients/sqs-calls.ts), as the reconciler asks the queue's depth and the writer parks a message. The MySQL
 * driver is in no function's bundle (the test below): health asks MySQL a query, behind RDS Proxy
 * the only check that sees Aurora, with the driver loaded from beside its bundle at its first check.
 */
const MUST_NOT_CARRY: Record<string, Heavy[]> = {
  'get-me': ALL,
  'delete-current-session': ALL,
  'delete-all-sessions': ALL,
  'get-queue-status': ALL,
  'join-queue': ALL,
  'claim-queue-pass': ALL,
  'get-waiting-page': ALL,
  health: ALL,
  'create-order': ALL,
  'create-coupon': ALL,
  'reconcile-reservations': ALL,
  'write-reservations': ALL,
};

/**
 * Builtins a function's cold start loads for nothing, and the functions that use them: web
 * streams (middy imported them for streamed responses only, infra/patches) and the SDK's config
 * loader's node:fs/promises (its credentials provider brought it, shared/platform/clients/aws-http.ts).
 * Each is a module Node compiles at import, ~2–3 % of a function's (counted by callgrind).
 */
const UNLESS_USED: Record<string, string[]> = {
  'stream/web': [],
  'fs/promises': ['migrate-database'],
};

/** A function's bundle as the stack builds it: the files it carries, and the builtins and other modules it imports. */
const bundles = new Map<string, Promise<{ inputs: string[]; imports: string[] }>>();
function bundleOf(id: string): Promise<{ inputs: string[]; imports: string[] }> {
  if (!bundles.has(id)) {
    bundles.set(
      id,
      build({
        ...ESBUILD_OPTIONS,
        absWorkingDir: root,
        entryPoints: [resolve(root, 'functions', `${id}.ts`)],
        outfile: `/unwritten/${id}/index.mjs`,
        write: false,
        metafile: true,
      }).then(({ metafile }) => ({
        inputs: Object.keys(metafile.inputs),
        // A builtin by its name with or without node: (an ES module imports node:x, CommonJS requires x).
        imports: Object.values(metafile.outputs).flatMap((output) => output.imports.filter((i) => i.external).map((i) => i.path.replace(/^node:/, ''))),
      })),
    );
  }
  return bundles.get(id)!;
}
const inputsOf = async (id: string) => (await bundleOf(id)).inputs;

describe("functions' bundles", () => {
  it('name only functions of the table', () => {
    expect(Object.keys(MUST_NOT_CARRY).filter((id) => !functions.some((f) => f.id === id))).toEqual([]);
  });

  it.each(Object.entries(MUST_NOT_CARRY))('%s carries none of the heavy modules it does not reach', async (id, forbidden) => {
    // Act
    const inputs = await inputsOf(id);

    // Assess: each heavy module found, with one of its files, to say where to look.
    const carried = Object.fromEntries(
      forbidden.flatMap((heavy) =>
        inputs
          .filter((file) => HEAVY[heavy].test(file))
          .slice(0, 1)
          .map((file) => [heavy, file]),
      ),
    );
    expect(carried).toEqual({});
  });

  it.each(functions.map((f) => [f.id, f] as const))(
    '%s carries no MySQL driver, and has it built beside its bundle if it reaches the loader',
    async (id, spec) => {
      // Act
      const inputs = await inputsOf(id);

      // Assess: the driver is never in the bundle; a bundle that can load it (mysql.ts) finds it beside itself.
      expect(inputs.filter((file) => HEAVY['the MySQL driver'].test(file)).slice(0, 1)).toEqual([]);
      const reachesLoader = inputs.includes('shared/platform/clients/mysql.ts');
      expect({ reachesLoader, driverBeside: besideModules(spec).some((m) => m.outfile === 'mysql-driver.mjs') }).toEqual({
        reachesLoader,
        driverBeside: reachesLoader,
      });
    },
  );

  it.each(functions.map((f) => [f.id] as const))('%s imports no builtin its cold start would load for nothing', async (id) => {
    // Act
    const { imports } = await bundleOf(id);

    // Assess
    expect(Object.keys(UNLESS_USED).filter((builtin) => imports.includes(builtin) && !UNLESS_USED[builtin]!.includes(id))).toEqual([]);
  });
});

describe("the environment's schemas in a bundle", () => {
  it('are carried only where read: code reading one need carries no other need’s schema, to be built at its cold start', async () => {
    // Prepare
    const entry = "import { readEnv, sessionEnv } from './shared/platform/config'; export const read = () => readEnv(sessionEnv);";
    const others = Object.entries(envNeeds).flatMap(([need, { schema }]) => (need === 'sessions' ? [] : Object.keys(schema.shape)));

    // Act
    const { outputFiles } = await build({ ...ESBUILD_OPTIONS, absWorkingDir: root, stdin: { contents: entry, resolveDir: root, loader: 'ts' }, write: false });

    // Assess: a schema's shape names each of its variables as a key.
    const text = outputFiles[0]!.text;
    expect(text).toContain('COOKIE_SECURE:');
    expect(others.filter((name) => text.includes(`${name}:`))).toEqual([]);
  });
});
