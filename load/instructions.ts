/**
 * `npm run instructions -- [--against 7ace490] [--paths sessions,catalog] [--calls 10000]`
 *
 * A hot path's own cost, apart from the twin: the instructions one request of its handler runs —
 * the function's code and the libraries it calls, no gateway, no poller, no emulator — in this
 * checkout and in an earlier commit, counted by valgrind (callgrind), which counts instructions,
 * not seconds: the same figure whatever else the machine is doing, so no A B B A is needed and a
 * difference of a few per cent shows. `npm run compare` measures CPU per request through the
 * twin, whose own code changes between commits (the event API Gateway's stand-in builds, what the
 * profiles leave unattributed); this holds the twin out.
 *
 * Each side's handler is bundled with its own sources and dependencies (the earlier commit in a
 * worktree, support/worktree.ts) into a small driver that sends it the same API Gateway event,
 * 20 at a time, against the same Redis and MariaDB (started here), and is run under callgrind for
 * `calls` and for three times as many requests: the difference over the difference in requests is
 * the instructions a request costs once warm, start-up and warm-up cancelled out. Prints a table
 * to stderr and one JSON object as its last line; writes an HTML report.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { migrate } from '../shared/platform/db/migrate';
import { startDatabase, startRedis } from '../infra/twin/services/services';
import { cell, escapeHtml } from './support/html';
import { printResult } from './support/result-line';
import { worktreeOf } from './support/worktree';

const STATE_DIR = resolve('.local/instructions');
const REPORTS_DIR = resolve('load/reports');
const log = (message: string) => process.stderr.write(`instructions: ${message}\n`);

/** Each path's request, as its driver sends it: the entry, and what the driver does first (a session to send, the event's path). */
const PATHS = {
  sessions: {
    label: 'GET /me',
    entry: 'functions/get-me.ts',
    prepare: (root: string) => `const { createSession, cookieValue } = await import(${JSON.stringify(join(root, 'shared/sessions/store.ts'))});
      const handle = await createSession({ id: 7, role: 'buyer', email: 'a@example.com' });
      event.cookies = ['sid=' + cookieValue(handle)];`,
  },
  catalog: {
    label: 'GET /programs (a cache hit)',
    entry: 'functions/list-programs.ts',
    prepare: () => `Object.assign(event, { routeKey: 'GET /programs', rawPath: '/programs', rawQueryString: 'careerTag=backend&page=1&size=20',
        queryStringParameters: { careerTag: 'backend', page: '1', size: '20' } });
      event.requestContext.http.path = '/programs';`,
  },
} as const;
type PathName = keyof typeof PATHS;

const { values } = parseArgs({
  options: {
    against: { type: 'string', default: '7ace490' },
    paths: { type: 'string', default: 'sessions,catalog' },
    calls: { type: 'string', default: '10000' },
  },
});
const paths = values.paths.split(',') as PathName[];
for (const path of paths) if (!(path in PATHS)) throw new Error(`no such path: ${path} (${Object.keys(PATHS).join(', ')})`);
const calls = Number(values.calls);

try {
  execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
} catch {
  throw new Error('valgrind is not installed: apt-get install -y valgrind');
}

/** The driver: the side's handler, sent the same event `calls` times, 20 in flight, after one request that fills what a hit needs. */
function driverSource(root: string, path: PathName): string {
  return `const { handler } = await import(${JSON.stringify(join(root, PATHS[path].entry))});
    const event = ${readFileSync(resolve('test/events/apigw-http/get-me.json'), 'utf8')};
    ${PATHS[path].prepare(root)}
    const context = { functionName: 'instructions', awsRequestId: 'instructions', getRemainingTimeInMillis: () => 10_000 };
    const send = () => handler({ ...event, headers: { ...event.headers } }, context);
    const first = await send();
    if (first.statusCode !== 200) throw new Error('the first request answered ' + JSON.stringify(first));
    let sent = 0;
    const calls = Number(process.argv[2]);
    await Promise.all(Array.from({ length: 20 }, async () => { while (sent < calls) { sent++; await send(); } }));
    process.exit(0);`;
}

/**
 * Bundles a side's driver (its sources, its dependencies) beside the Lua files its code reads and,
 * where that side loads the MySQL driver from beside its bundle, the driver (infra/bundling.ts).
 */
async function bundleDriver(side: string, root: string, path: PathName): Promise<string> {
  const dir = join(STATE_DIR, side, path);
  mkdirSync(join(dir, 'lua'), { recursive: true });
  execFileSync('sh', ['-c', `find "${root}/shared" -path '*/lua/*.lua' -exec cp -t "${dir}/lua/" {} +`]);
  writeFileSync(join(dir, 'driver.mts'), driverSource(root, path));
  const options = {
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    absWorkingDir: root,
    banner: { js: "import{createRequire as __cr}from'node:module';const require=__cr(import.meta.url);" },
    logLevel: 'error',
  } as const;
  const outfile = join(dir, 'driver.mjs');
  await build({ ...options, entryPoints: [join(dir, 'driver.mts')], outfile });
  const mysqlDriver = join(root, 'shared/platform/clients/mysql-driver.ts');
  if (existsSync(mysqlDriver)) await build({ ...options, entryPoints: [mysqlDriver], outfile: join(dir, 'mysql-driver.mjs') });
  return outfile;
}

/** Instructions of one run of the driver under callgrind, every thread of the process counted. */
function instructionsOf(driver: string, requests: number, env: Record<string, string>): Promise<number> {
  return new Promise((done, fail) => {
    // node --predictable: V8 compiles and collects on the main thread, in the same order each run, so a
    // count repeats within ~0.1 % (without it, within ~3 %: as much as the differences it is for).
    const callgrind = ['--tool=callgrind', '--smc-check=all-non-file', '--callgrind-out-file=/dev/null'];
    const child = spawn('valgrind', [...callgrind, process.execPath, '--predictable', driver, String(requests)], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('exit', (code) => {
      const collected = /Collected : (\d+)/.exec(err);
      if (code === 0 && collected) done(Number(collected[1]));
      else fail(new Error(`${driver} ${requests} exited ${code}: ${err.slice(-2000)}`));
    });
  });
}

async function perRequest(driver: string, env: Record<string, string>): Promise<number> {
  const [few, many] = [await instructionsOf(driver, calls, env), await instructionsOf(driver, 3 * calls, env)];
  return Math.round((many - few) / (2 * calls));
}

const [redis, database] = await Promise.all([startRedis(STATE_DIR, false), startDatabase(STATE_DIR, 'surge_instructions')]);
try {
  await migrate(database.url);
  const seed = await (await import('../shared/platform/clients/mysql')).mysqlDriver();
  const admin = await seed.createConnection({ uri: database.adminUrl });
  await admin.query("DELETE FROM programs WHERE title LIKE 'Instructions %'");
  await admin.query(
    `INSERT INTO programs (title, career_tag, type, description) VALUES ${Array.from({ length: 40 }, (_, i) => `('Instructions ${i}', 'backend', 'course', 'A program')`).join(', ')}`,
  );
  await admin.end();

  const sides = { this: resolve('.'), against: worktreeOf(values.against, resolve('.local/compare'), log) };
  const results: Record<string, { label: string; this: number; against: number; ratio: number }> = {};
  for (const path of paths) {
    // Each side its own Redis database: neither reads the other's sessions or cached pages.
    const envOf = (db: number) => ({ REDIS_URL: `${redis.url}/${db}`, DATABASE_URL: database.url, COOKIE_SECURE: 'false' });
    const [ours, theirs] = await Promise.all([bundleDriver('this', sides.this, path), bundleDriver('against', sides.against, path)]);
    log(`${path}: counting ${calls} and ${3 * calls} requests on each side (a few minutes)`);
    const [a, b] = await Promise.all([perRequest(ours, envOf(1)), perRequest(theirs, envOf(2))]);
    results[path] = { label: PATHS[path].label, this: a, against: b, ratio: Math.round((a / b) * 1000) / 1000 };
    log(`${path}: ${a} instructions a request here, ${b} at ${values.against} (×${results[path].ratio})`);
  }

  mkdirSync(REPORTS_DIR, { recursive: true });
  const report = join(REPORTS_DIR, `instructions-${new Date().toISOString().replace(/[:.]/g, '-')}.html`);
  const rows = Object.values(results).map((r) => `<tr>${cell(r.label)}${cell(r.this)}${cell(r.against)}${cell(`×${r.ratio}`)}</tr>`);
  writeFileSync(
    report,
    `<!doctype html><meta charset="utf-8"><title>Instructions per request</title><h1>Instructions per request, the handler alone</h1>
<p>This checkout against ${escapeHtml(values.against)}; valgrind (callgrind), ${calls} and ${3 * calls} requests on each side.</p>
<table><tr><th>path</th><th>this checkout</th><th>${escapeHtml(values.against)}</th><th>ratio</th></tr>${rows.join('')}</table>`,
  );
  log(`report: ${report}`);
  await printResult({
    tool: 'instructions',
    against: values.against,
    calls,
    method: 'valgrind --tool=callgrind of node --predictable, (Ir(3n) − Ir(n)) / 2n',
    paths: results,
  });
} finally {
  await Promise.all([redis.stop(), database.stop()]);
}
