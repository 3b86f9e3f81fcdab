/**
 * `npm run instructions -- [--against 7ace490] [--paths sessions,catalog,feeds,mail,floor] [--calls N] [--measure cpu [--rounds 2]]`
 *
 * A hot path's own cost, apart from the twin: the instructions one request of its handler runs —
 * the function's code and the libraries it calls, no gateway, no poller, no SMTP listener — in this
 * checkout and in an earlier commit, counted by valgrind (callgrind), which counts instructions,
 * not seconds: the same figure whatever else the machine is doing, so no A B B A is needed and a
 * difference of a few per cent shows. `npm run compare` measures CPU per request through the
 * twin, whose own code changes between commits (the event API Gateway's stand-in builds, what the
 * profiles leave unattributed); this holds the twin out.
 *
 * Each side's handler is bundled with its own sources and dependencies (the earlier commit in a
 * worktree, support/worktree.ts) into a small driver that sends it the same API Gateway event,
 * 20 at a time (or, for mail, SES events of newsletter issues stored in the emulator's S3, one at a
 * time), against the same Redis and MariaDB (started here), and is run under callgrind for
 * `calls` and for three times as many requests: the difference over the difference in requests is
 * the instructions a request costs once warm, start-up and warm-up cancelled out. Prints a table
 * to stderr and one JSON object as its last line; writes an HTML report.
 *
 * `--measure cpu` runs the same drivers without valgrind and takes the CPU a warm request costs the
 * handler's process (every thread, the kernel's side of its system calls included, which callgrind
 * does not count) and the CPU it costs Redis and MariaDB: the product's whole bill, with no
 * profile to share out and no twin beside it. Each side runs alone on the machine, A B B A for
 * each of `--rounds`, so the two share no core and a drift in the machine falls on both alike; the
 * figure is the mean of a side's runs, each listed.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { build } from 'esbuild';
import { Redis } from 'ioredis';
import type { RowDataPacket } from 'mysql2';
import { inboundMail } from '../functions/table';
import { runtimeEnvironment, TWIN_INBOUND_DOMAIN, TWIN_RAW_MAIL_BUCKET, TWIN_REGION } from '../infra/twin/deployment';
import { functionArnOf, passingVerdicts, sesEvent, sesMessageId } from '../infra/twin/events/ses-event';
import { insertInboxTokens, insertUsers } from '../infra/twin/seed';
import { mysqlDriver } from '../shared/platform/clients/mysql';
import { migrate } from '../shared/platform/db/migrate';
import { startDatabase, startEmulator, startRedis } from '../infra/twin/services/services';
import { processCpuSeconds } from './support/cpu';
import { round } from './support/round';
import { until } from '../shared/platform/wait';
import { cell, escapeHtml } from './support/html';
import { NEWSLETTER_ADDRESS, rawNewsletterIssue } from './support/newsletter-mail';
import { printResult } from './support/result-line';
import { worktreeOf } from './support/worktree';

const STATE_DIR = resolve('.local/instructions');
const REPORTS_DIR = resolve('load/reports');
const log = (message: string) => process.stderr.write(`instructions: ${message}\n`);

/**
 * Feed tokens the feeds path's polls go round: before 2026-12-07 each poll, a 304 too, took from
 * its token's rate (1,000 at once), so that a run of 3n polls, or a --measure cpu warm-up and n,
 * leaves each at most 500 of it at an earlier commit (--against).
 */
const feedTokens = () => Math.max(100, Math.ceil((3 * callsOf('feeds') + CPU_WARM_UP) / 500));

/**
 * Each path's request, as its driver sends it: the entry, how many requests a count takes unless
 * --calls says, how many are in flight at once, and what the driver does first to the recorded API
 * Gateway event it sends (a session to send, the event's path); the mail path, which has no such
 * event, is sent SES receipt events of its own instead (prepareMail).
 */
const PATHS = {
  sessions: {
    label: 'GET /me',
    entry: 'functions/get-me.ts',
    calls: 10_000,
    inFlight: 20,
    prepare: (root: string) => `const { createSession, cookieValue } = await import(${JSON.stringify(join(root, 'shared/sessions/store.ts'))});
      const handle = await createSession({ id: 7, role: 'buyer', email: 'a@example.com' });
      event.cookies = ['sid=' + cookieValue(handle)];`,
  },
  catalog: {
    label: 'GET /programs (a cache hit)',
    entry: 'functions/list-programs.ts',
    calls: 10_000,
    inFlight: 20,
    prepare: () => `Object.assign(event, { routeKey: 'GET /programs', rawPath: '/programs', rawQueryString: 'careerTag=backend&page=1&size=20',
        queryStringParameters: { careerTag: 'backend', page: '1', size: '20' } });
      event.requestContext.http.path = '/programs';`,
  },
  feeds: {
    label: 'GET /feeds/{token}/atom/all (a 304)',
    entry: 'functions/get-atom-feed.ts',
    calls: 10_000,
    inFlight: 20,
    status: 304,
    // Round robin over tokens Redis knows at one version, each poll naming it (If-None-Match): no token
    // meets its rate within a count (feedTokens), and no poll asks MySQL.
    prepare: (root: string) => `const { redis } = await import(${JSON.stringify(join(root, 'shared/platform/clients/redis.ts'))});
      const { feedKeys } = await import(${JSON.stringify(join(root, 'shared/mail/feed-access.ts'))});
      const { feedTokenHash } = await import(${JSON.stringify(join(root, 'shared/mail/feed-tokens.ts'))});
      const version = '1796053960080000';
      texts = [];
      for (let i = 0; i < ${feedTokens()}; i++) {
        const token = ('instructions-' + i).padEnd(43, 'x');
        const keys = feedKeys(feedTokenHash(token));
        await Promise.all([redis().set(keys.reader, '7'), redis().set(keys.version, version), redis().del(keys.rate)]);
        const poll = structuredClone(event);
        delete poll.cookies;
        Object.assign(poll, { routeKey: 'GET /feeds/{token}/atom/{feed}', rawPath: '/feeds/' + token + '/atom/all', pathParameters: { token, feed: 'all' } });
        Object.assign(poll.requestContext, { routeKey: poll.routeKey });
        poll.requestContext.http.path = poll.rawPath;
        poll.headers['if-none-match'] = '"' + version + '"';
        texts.push(JSON.stringify(poll));
      }`,
  },
  // The read paths' floor (load/baselines/floor.ts), shaped as GET /me: a GET of a value as large as
  // its session's (35 bytes), a body as large as its answer (47), and no middleware. What its
  // instructions are above is what GET /me's stack and session check cost, with no twin's noise.
  floor: {
    label: 'the floor: one Redis GET, no middleware',
    entry: 'load/baselines/floor.ts',
    calls: 10_000,
    inFlight: 20,
    prepare: (root: string) => `const { redis } = await import(${JSON.stringify(join(root, 'shared/platform/clients/redis.ts'))});
      await redis().set('instructions:floor', 'v'.repeat(35));
      delete event.cookies;
      Object.assign(event, { routeKey: 'GET /__baseline/floor', rawPath: '/__baseline/floor', rawQueryString: 'key=instructions:floor&body=47',
        queryStringParameters: { key: 'instructions:floor', body: '47' } });
      event.requestContext.http.path = '/__baseline/floor';`,
  },
  mail: {
    label: 'a newsletter issue received (SES event → issue filed)',
    entry: 'functions/receive-mail.ts',
    calls: 100,
    // One at a time, as SES's invocations reach a Lambda instance; under callgrind, twenty at once
    // also keep Redis's replies waiting past the client's 1 s timeout.
    inFlight: 1,
    // Issues sent before counting, in each run alike: without them the counts span the thread's and the
    // handler's compilation, and a mail's figure falls with n (37.7 M at n = 10, 17.0 M at n = 100).
    warmUp: 300,
    prepare: undefined,
  },
} as const;
type PathName = keyof typeof PATHS;

const { values } = parseArgs({
  options: {
    against: { type: 'string', default: '7ace490' },
    paths: { type: 'string', default: 'sessions,catalog' },
    calls: { type: 'string' },
    measure: { type: 'string', default: 'instructions' },
    rounds: { type: 'string', default: '2' },
  },
});
if (values.measure !== 'instructions' && values.measure !== 'cpu') throw new Error(`--measure instructions or cpu, not ${values.measure}`);
const measuringCpu = values.measure === 'cpu';
const paths = values.paths.split(',') as PathName[];
for (const path of paths) if (!(path in PATHS)) throw new Error(`no such path: ${path} (${Object.keys(PATHS).join(', ')})`);
const callsOf = (path: PathName) => Number(values.calls ?? PATHS[path].calls);
const MAIL_WARM_UP = PATHS.mail.warmUp;

if (!measuringCpu) {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error('valgrind is not installed: apt-get install -y valgrind');
  }
}
/**
 * How many rounds of A B B A measure CPU: unlike a count, a side's CPU a request moves from one
 * run to the next (2026-12-06, 1,000 mails a run: by up to a fifth).
 */
const CPU_ROUNDS = Number(values.rounds);
if (!Number.isInteger(CPU_ROUNDS) || CPU_ROUNDS < 1) throw new Error(`--rounds is a whole number from 1, not ${values.rounds}`);

/**
 * The driver: the side's handler sent `calls` requests, the path's inFlight at a time, after what
 * fills what they reuse: one request (a cached page), or the mail path's warm-up issues (the
 * newsletter, the compiled code, the parser thread). An HTTP path's driver sends one event over
 * and over (the feeds path a round of them); the mail driver sends the SES events of events.json
 * beside it from `offset` on, each a message of its own, so that no delivery is a redelivery.
 */
function driverSource(root: string, path: PathName): string {
  const { prepare } = PATHS[path];
  const send = prepare
    ? `const event = ${readFileSync(resolve('test/events/apigw-http/get-me.json'), 'utf8')};
    // Each request a fresh event parsed from its text, as Lambda's runtime hands a handler one. A copy
    // made by spreading the recorded event is an object V8 then adds each property to in ~1.7 µs (the
    // middlewares add three), a cost no deployed event has, which weighed on whichever side added more.
    // A path may send several events in turn (texts); the others send the one.
    let texts;
    ${prepare(root)}
    texts ??= [JSON.stringify(event)];
    let next = 0;
    const request = () => handler(JSON.parse(texts[next++ % texts.length]), context);
    const first = await request();
    if (first.statusCode !== ${'status' in PATHS[path] ? PATHS[path].status : 200}) throw new Error('the first request answered ' + JSON.stringify(first));`
    : `const { readFileSync } = await import('node:fs');
    const events = JSON.parse(readFileSync(new URL('./events.json', import.meta.url), 'utf8'));
    let next = Number(process.argv[3]);
    const request = () => handler(events[next++], context);
    await sendAll(${MAIL_WARM_UP});`;
  return `const { handler } = await import(${JSON.stringify(join(root, PATHS[path].entry))});
    const context = { functionName: 'instructions', awsRequestId: 'instructions', getRemainingTimeInMillis: () => 10_000 };
    const sendAll = async (count) => {
      let sent = 0;
      await Promise.all(Array.from({ length: ${PATHS[path].inFlight} }, async () => { while (sent < count) { sent++; await request(); } }));
    };
    ${send}
    // For --measure cpu: more requests first (argv[4]), then the whole process's CPU — every thread's, the
    // parser thread's too — where the measured requests start and where they end (a pipe's write is synchronous here).
    await sendAll(Number(process.argv[4] ?? 0));
    process.stdout.write(JSON.stringify({ warm: process.cpuUsage() }) + '\\n');
    await sendAll(Number(process.argv[2]));
    process.stdout.write(JSON.stringify({ done: process.cpuUsage() }) + '\\n');
    process.exit(0);`;
}

/**
 * Bundles a side's driver (its sources, its dependencies) beside the Lua files its code reads and,
 * where that side loads the MySQL driver from beside its bundle, the driver (infra/bundling.ts).
 */
async function bundleDriver(side: string, root: string, path: PathName): Promise<string> {
  // Round one (7ace490, the default) had no feeds: such a path is compared with a later commit.
  if (!existsSync(join(root, PATHS[path].entry))) throw new Error(`${root} has no ${PATHS[path].entry}: pass --against a commit that has the ${path} path`);
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
  // The mail function's parser thread, beside its bundle as `cdk deploy` ships it (isolated-parse.ts).
  if (path === 'mail') await build({ ...options, entryPoints: [join(root, 'shared/mail/parse-worker.ts')], outfile: join(dir, 'parse-worker.mjs') });
  return outfile;
}

/** Instructions of one run of the driver under callgrind, every thread of the process counted. */
function instructionsOf(driver: string, requests: number, offset: number, env: Record<string, string>): Promise<number> {
  return new Promise((done, fail) => {
    // node --predictable: V8 compiles and collects on the main thread, in the same order each run, so a
    // count repeats within ~0.1 % (without it, within ~3 %: as much as the differences it is for).
    const callgrind = ['--tool=callgrind', '--smc-check=all-non-file', '--callgrind-out-file=/dev/null'];
    const child = spawn('valgrind', [...callgrind, process.execPath, '--predictable', driver, String(requests), String(offset)], {
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

/** A warm request's instructions: the count of 3n requests less that of n, over 2n. The mail driver's two runs take events of their own (w warm-ups and n, then w and 3n). */
async function perRequest(driver: string, calls: number, env: Record<string, string>): Promise<number> {
  const [few, many] = [await instructionsOf(driver, calls, 0, env), await instructionsOf(driver, 3 * calls, MAIL_WARM_UP + calls, env)];
  return Math.round((many - few) / (2 * calls));
}

/** Milliseconds of CPU: the handler's process, and each store's over the same run. */
interface CpuSpent {
  handler: number;
  redis: number;
  database: number;
}

/**
 * Waits until the stores are idle: a run that starts while MariaDB still flushes what came before
 * (the events' readers inserted, the last run's issues) is charged for it. Seen so: the first of
 * four runs at 6.55 ms a mail against 4.75–5.00 for the rest. Idle is a second in which Redis and
 * MariaDB used at most two ticks of /proc's 10 ms; given up after a minute, the run then measured.
 */
async function storesSettled(stores: { redis?: number; database?: number }): Promise<void> {
  const used = () => processCpuSeconds(stores.redis) + processCpuSeconds(stores.database);
  let last = used();
  await until(
    async () => {
      const now = used();
      const idle = now - last <= 0.02;
      last = now;
      return idle;
    },
    60_000,
    'the stores idle',
    1000,
    { atDeadline: 'give up' },
  );
}

/**
 * Requests an HTTP path's driver sends before its measured ones, for --measure cpu: its code
 * compiled and its caches filled before the count starts (the mail driver warms on its own).
 */
const CPU_WARM_UP = 5_000;

/**
 * A warm request's CPU, from one run of the driver: its process's, from the mark it writes after
 * warming up to the end, and each store's over the same span (their /proc counts, in ticks of 10
 * ms), over the requests sent in it. Not the difference of two runs, as instructions are counted:
 * a process's start and warm-up differ from run to run by more than a count does.
 */
async function cpuPerRequest(
  path: PathName,
  driver: string,
  calls: number,
  env: Record<string, string>,
  stores: { redis?: number; database?: number },
  run: number,
): Promise<CpuSpent> {
  // From an empty Redis database of the side's: every mail is from one sender, whose domain's mail
  // rate would refuse (quarantine, for less work) what passed its count in the hour.
  const client = new Redis(env.REDIS_URL!, { lazyConnect: true });
  await client.connect();
  await client.flushdb();
  client.disconnect();
  await storesSettled(stores);
  const storesCpu = () => ({ redis: processCpuSeconds(stores.redis), database: processCpuSeconds(stores.database) });
  const warmUp = path === 'mail' ? 0 : CPU_WARM_UP;
  const offset = run * (MAIL_WARM_UP + calls);
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [driver, String(calls), String(offset), String(warmUp)], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let atWarm: ReturnType<typeof storesCpu> | undefined;
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (!atWarm && out.includes('"warm"')) atWarm = storesCpu();
    });
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('exit', (code) => {
      const atEnd = storesCpu();
      const usage = (mark: string) => {
        const m = new RegExp(`\\{"${mark}":\\{"user":(\\d+),"system":(\\d+)\\}\\}`).exec(out);
        return m ? (Number(m[1]) + Number(m[2])) / 1000 : undefined;
      };
      const [warm, end] = [usage('warm'), usage('done')];
      if (code !== 0 || warm === undefined || end === undefined || !atWarm) return fail(new Error(`${driver} ${calls} exited ${code}: ${err.slice(-2000)}`));
      done({
        handler: (end - warm) / calls,
        redis: ((atEnd.redis - atWarm.redis) * 1000) / calls,
        database: ((atEnd.database - atWarm.database) * 1000) / calls,
      });
    });
  });
}

/**
 * What a side's mail driver sends: 2w + 4n readers for its two counts (w + n for each of its runs
 * under --measure cpu), each mailed its own issue of one newsletter (the side's own), stored raw
 * where SES's S3 action puts it, and the receipt events SES sends, as the twin's listener builds
 * them, in dir/events.json. Returns the messages' ids.
 */
async function prepareMail(dir: string, side: string, calls: number, emulatorUrl: string, databaseUrl: string): Promise<string[]> {
  const count = measuringCpu ? 2 * CPU_ROUNDS * (MAIL_WARM_UP + calls) : 2 * MAIL_WARM_UP + 4 * calls;
  const tag = `${side}-${randomBytes(3).toString('hex')}`;
  const users = await insertUsers(
    databaseUrl,
    Array.from({ length: count }, (_, i) => `instructions-${tag}-${i}@surge.test`),
    `instructions-${tag}`,
  );
  const tokens = await insertInboxTokens(
    databaseUrl,
    users.map((u) => u.id),
  );
  const s3 = new S3Client({
    region: TWIN_REGION,
    endpoint: emulatorUrl,
    forcePathStyle: true,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  await s3.send(new CreateBucketCommand({ Bucket: TWIN_RAW_MAIL_BUCKET })).catch((error: Error) => {
    if (error.name !== 'BucketAlreadyOwnedByYou' && error.name !== 'BucketAlreadyExists') throw error;
  });
  const events = [];
  for (const [i, token] of tokens.entries()) {
    const recipient = `${token}@${TWIN_INBOUND_DOMAIN}`;
    const raw = await rawNewsletterIssue(i, recipient, `${tag}.instructions.example`, `Issue ${i}`);
    const messageId = sesMessageId();
    await s3.send(new PutObjectCommand({ Bucket: TWIN_RAW_MAIL_BUCKET, Key: `${inboundMail.prefix}${messageId}`, Body: raw }));
    const received = { messageId, raw, mailFrom: NEWSLETTER_ADDRESS, destination: [recipient], recipients: [recipient], receivedAt: new Date() };
    events.push(sesEvent({ ...received, functionArn: functionArnOf('surge-receive-mail'), verdicts: passingVerdicts() }));
  }
  s3.destroy();
  writeFileSync(join(dir, 'events.json'), JSON.stringify(events));
  return events.map((e) => e.Records[0]!.ses.mail.messageId);
}

/** Counts only what filing costs: every message sent must have been filed, none quarantined, rejected or taken for a redelivery. */
async function assertFiled(databaseUrl: string, messageIds: string[]): Promise<void> {
  const conn = await (await mysqlDriver()).createConnection({ uri: databaseUrl });
  try {
    const [rows] = await conn.query<RowDataPacket[]>('SELECT outcome, COUNT(*) AS n FROM mail_outcomes WHERE ses_message_id IN (?) GROUP BY outcome', [
      messageIds,
    ]);
    const outcomes = Object.fromEntries(rows.map((r) => [r.outcome as string, Number(r.n)]));
    if (outcomes.filed !== messageIds.length)
      throw new Error(`of ${messageIds.length} mails sent, the outcomes were ${JSON.stringify(outcomes)}: not every one filed`);
  } finally {
    await conn.end();
  }
}

const [redis, database, emulator] = await Promise.all([
  startRedis(STATE_DIR, false),
  startDatabase(STATE_DIR, 'surge_instructions'),
  paths.includes('mail') ? startEmulator(STATE_DIR) : undefined,
]);
try {
  await migrate(database.url);
  const admin = await (await mysqlDriver()).createConnection({ uri: database.adminUrl });
  await admin.query("DELETE FROM programs WHERE title LIKE 'Instructions %'");
  await admin.query(
    `INSERT INTO programs (title, career_tag, type, description) VALUES ${Array.from({ length: 40 }, (_, i) => `('Instructions ${i}', 'backend', 'course', 'A program')`).join(', ')}`,
  );
  await admin.end();

  const sides = { this: resolve('.'), against: worktreeOf(values.against, resolve('.local/compare'), log) };
  const results: Record<string, { label: string; calls: number; this: number; against: number; ratio: number }> = {};
  const cpuResults: Record<
    string,
    { label: string; calls: number; this: CpuSpent; against: CpuSpent; runs: Record<'this' | 'against', number[]>; ratio: number }
  > = {};
  const stores = { redis: redis.pid, database: database.pid };
  const productMs = (c: CpuSpent) => c.handler + c.redis + c.database;
  const roundCpu = (c: CpuSpent): CpuSpent => ({ handler: round(c.handler, 4), redis: round(c.redis, 4), database: round(c.database, 4) });
  for (const path of paths) {
    // Each side its own Redis database: neither reads the other's sessions or cached pages.
    const mailEnv = emulator && {
      ...runtimeEnvironment(emulator.url),
      INBOUND_DOMAIN: TWIN_INBOUND_DOMAIN,
      RAW_MAIL_BUCKET: TWIN_RAW_MAIL_BUCKET,
      RAW_MAIL_PREFIX: inboundMail.prefix,
      MAIL_PARSER_THREADS: '1',
    };
    const envOf = (db: number) => ({
      REDIS_URL: `${redis.url}/${db}`,
      DATABASE_URL: database.url,
      COOKIE_SECURE: 'false',
      ...(path === 'mail' ? mailEnv : {}),
    });
    const calls = callsOf(path);
    const [ours, theirs] = await Promise.all([bundleDriver('this', sides.this, path), bundleDriver('against', sides.against, path)]);
    const sent =
      path === 'mail' && emulator
        ? await Promise.all([
            prepareMail(dirname(ours), 'this', calls, emulator.url, database.url),
            prepareMail(dirname(theirs), 'against', calls, emulator.url, database.url),
          ])
        : [];
    if (measuringCpu) {
      log(`${path}: CPU of ${calls} warm requests, this checkout and ${values.against} alone in turn, A B B A ×${CPU_ROUNDS}`);
      const runs: Record<'this' | 'against', CpuSpent[]> = { this: [], against: [] };
      for (let r = 0; r < CPU_ROUNDS; r++) {
        for (const [side, run] of [
          ['this', 2 * r],
          ['against', 2 * r],
          ['against', 2 * r + 1],
          ['this', 2 * r + 1],
        ] as const) {
          runs[side].push(await cpuPerRequest(path, side === 'this' ? ours : theirs, calls, envOf(side === 'this' ? 1 : 2), stores, run));
        }
      }
      const mean = (list: CpuSpent[]): CpuSpent => {
        const avg = (pick: (c: CpuSpent) => number) => list.reduce((sum, c) => sum + pick(c), 0) / list.length;
        return { handler: avg((c) => c.handler), redis: avg((c) => c.redis), database: avg((c) => c.database) };
      };
      const [a, b] = [mean(runs.this), mean(runs.against)];
      for (const messageIds of sent) await assertFiled(database.url, messageIds);
      const productOfRuns = (list: CpuSpent[]) => list.map((c) => round(productMs(c), 4));
      cpuResults[path] = {
        label: PATHS[path].label,
        calls,
        this: roundCpu(a),
        against: roundCpu(b),
        runs: { this: productOfRuns(runs.this), against: productOfRuns(runs.against) },
        ratio: round(productMs(a) / productMs(b), 3),
      };
      log(
        `${path}: ${productMs(a).toFixed(4)} ms of CPU a request here (handler ${a.handler.toFixed(4)}, Redis ${a.redis.toFixed(4)}, MariaDB ${a.database.toFixed(4)}; runs ${cpuResults[path].runs.this.join(', ')}), ` +
          `${productMs(b).toFixed(4)} at ${values.against} (handler ${b.handler.toFixed(4)}, Redis ${b.redis.toFixed(4)}, MariaDB ${b.database.toFixed(4)}; runs ${cpuResults[path].runs.against.join(', ')}) (×${cpuResults[path].ratio})`,
      );
      continue;
    }
    log(`${path}: counting ${calls} and ${3 * calls} requests on each side (a few minutes)`);
    const [a, b] = await Promise.all([perRequest(ours, calls, envOf(1)), perRequest(theirs, calls, envOf(2))]);
    for (const messageIds of sent) await assertFiled(database.url, messageIds);
    results[path] = { label: PATHS[path].label, calls, this: a, against: b, ratio: Math.round((a / b) * 1000) / 1000 };
    log(`${path}: ${a} instructions a request here, ${b} at ${values.against} (×${results[path].ratio})`);
  }

  mkdirSync(REPORTS_DIR, { recursive: true });
  const report = join(REPORTS_DIR, `${measuringCpu ? 'handler-cpu' : 'instructions'}-${new Date().toISOString().replace(/[:.]/g, '-')}.html`);
  const against = escapeHtml(values.against);
  const cpuCells = (c: CpuSpent) => `${cell(round(productMs(c), 4))}${cell(c.handler)}${cell(c.redis)}${cell(c.database)}`;
  writeFileSync(
    report,
    measuringCpu
      ? `<!doctype html><meta charset="utf-8"><title>CPU per request, the handler alone</title><h1>CPU per request, the handler alone, with its stores</h1>
<p>This checkout against ${against}; ms of CPU a warm request, over n requests after a warm-up, each side alone in turn, A B B A ×${CPU_ROUNDS}, a side's runs averaged (each listed).</p>
<table><tr><th>path</th><th>n</th><th>side</th><th>product</th><th>handler's process</th><th>Redis</th><th>MariaDB</th><th>runs</th><th>ratio</th></tr>${Object.values(
          cpuResults,
        )
          .map(
            (r) =>
              `<tr>${cell(r.label)}${cell(r.calls)}${cell('this checkout')}${cpuCells(r.this)}${cell(r.runs.this.join(', '))}${cell(`×${r.ratio}`)}</tr>` +
              `<tr>${cell('')}${cell('')}${cell(values.against)}${cpuCells(r.against)}${cell(r.runs.against.join(', '))}${cell('')}</tr>`,
          )
          .join('')}</table>`
      : `<!doctype html><meta charset="utf-8"><title>Instructions per request</title><h1>Instructions per request, the handler alone</h1>
<p>This checkout against ${against}; valgrind (callgrind), n and 3n requests on each side.</p>
<table><tr><th>path</th><th>n</th><th>this checkout</th><th>${against}</th><th>ratio</th></tr>${Object.values(results)
          .map((r) => `<tr>${cell(r.label)}${cell(r.calls)}${cell(r.this)}${cell(r.against)}${cell(`×${r.ratio}`)}</tr>`)
          .join('')}</table>`,
  );
  log(`report: ${report}`);
  await printResult(
    measuringCpu
      ? {
          tool: 'instructions',
          measure: 'cpu',
          against: values.against,
          method:
            "ms of CPU a request: the driver's process.cpuUsage() (every thread, user and system) and /proc of Redis and MariaDB, from the end of its warm-up to its last request, over n; A B B A",
          paths: cpuResults,
        }
      : { tool: 'instructions', against: values.against, method: 'valgrind --tool=callgrind of node --predictable, (Ir(3n) − Ir(n)) / 2n', paths: results },
  );
} finally {
  await Promise.all([redis.stop(), database.stop(), emulator?.stop()]);
}
