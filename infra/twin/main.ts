/**
 * `npm start`: the whole of Surge on this machine. Starts (or reuses, through REDIS_URL,
 * DATABASE_URL and AWS_ENDPOINT_URL) Redis, MariaDB and the SQS/S3 emulator, migrates and seeds,
 * then serves the function table until SIGINT (Ctrl-C) or SIGTERM, either of which stops
 * everything it started within 10 s, whether it is serving or still starting.
 *
 *   npm start -- --bundles             the bundles `cdk deploy` uploads, each with exactly its row's environment
 *   npm start -- --lambda-instances 64 with --bundles: Lambda's instance model, one event at a time per instance
 *   npm start -- --aws-stores          TLS-only stores with AUTH, credentials looked up in Secrets Manager
 *   npm start -- --redis-cluster       Redis as a cluster of three masters, the functions with REDIS_CLUSTER=true
 *   npm start -- --edge                the prod stack's CloudFront and WAF in front, read from its synthesized template
 *   npm start -- --fresh               start afresh: the stores' data (Redis, MariaDB) under the state directory removed first
 * (or SURGE_BUNDLES=true, SURGE_LAMBDA_INSTANCES=64, SURGE_AWS_STORES=true, SURGE_REDIS_CLUSTER=true, SURGE_EDGE=true)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { inboundMail } from '../../functions/table';
import { killAllChildren, stopAllChildren } from './services/processes';
import { demoAccounts } from './seed';
import { parseVerdicts } from './events/ses-event';
import { ensureTwinCertificates } from './services/tls';
import { EXTRA_FUNCTIONS_ENV, type ExtraFunction } from './extra-functions';
import { startTwin, type Twin } from './twin';

const { values: flags } = parseArgs({
  options: {
    bundles: { type: 'boolean' },
    'lambda-instances': { type: 'string' },
    'aws-stores': { type: 'boolean' },
    'redis-cluster': { type: 'boolean' },
    edge: { type: 'boolean' },
    fresh: { type: 'boolean' },
  },
});

const env = z
  .object({
    PORT: z.coerce.number().int().min(0).max(65535).default(3000),
    SURGE_STATE_DIR: z.string().default('.local/twin'),
    SURGE_DATABASE: z
      .string()
      .regex(/^[A-Za-z0-9_]+$/)
      .default('surge'),
    // A module exporting `extraFunctions` to serve beside the table's (the benches' baselines).
    [EXTRA_FUNCTIONS_ENV]: z.string().min(1).optional(),
    SMTP_PORT: z.coerce.number().int().min(0).max(65535).default(inboundMail.smtpPort),
    SURGE_SES_VERDICTS: z.string().optional(),
    SURGE_REDIS_DURABLE: z.enum(['true', 'false']).default('true'),
    SURGE_BUNDLES: z.enum(['true', 'false']).default(flags.bundles ? 'true' : 'false'),
    SURGE_LAMBDA_INSTANCES: z.coerce.number().int().min(1).max(256).optional(),
    SURGE_AWS_STORES: z.enum(['true', 'false']).default(flags['aws-stores'] ? 'true' : 'false'),
    SURGE_REDIS_CLUSTER: z.enum(['true', 'false']).default(flags['redis-cluster'] ? 'true' : 'false'),
    SURGE_EDGE: z.enum(['true', 'false']).default(flags.edge ? 'true' : 'false'),
    SURGE_FUNCTIONS_SQS_ENDPOINT: z.url().optional(),
    // A fault switch for the fault-injection suite, off by default: every queue batch delivered twice, shuffled.
    SURGE_DELIVER_TWICE: z.enum(['true', 'false']).default('false'),
  })
  .parse({ ...process.env, ...(flags['lambda-instances'] ? { SURGE_LAMBDA_INSTANCES: flags['lambda-instances'] } : {}) });
if (env.SURGE_LAMBDA_INSTANCES && env.SURGE_BUNDLES !== 'true') throw new Error('--lambda-instances runs bundles: add --bundles');

// Read by `npm run bench` and `npm run reconcile` to find a running twin.
const stateFile = join(env.SURGE_STATE_DIR, 'twin.json');

/** How long the twin's orderly stop may take before what it left running is stopped all at once. */
const ORDERLY_STOP_MS = 3_000;
/** However the stop goes, the twin is gone this long after the signal. */
const STOP_DEADLINE_MS = 10_000;

let twin: Twin | undefined;
/** With --aws-stores the twin runs in a child process (see below); a stop signal is relayed to it. */
let twinProcess: ChildProcess | undefined;
let stopping: Promise<never> | undefined;

/** Readable by this user only: with AWS-like stores it holds the stores' passwords. */
function writeStateFile(serving: Twin): void {
  writeFileSync(
    stateFile,
    JSON.stringify(
      {
        pid: process.pid,
        url: serving.url,
        gatewayUrl: serving.gatewayUrl,
        redisUrl: serving.redisUrl,
        databaseUrl: serving.databaseUrl,
        emulatorUrl: serving.emulatorUrl,
        smtpUrl: serving.smtpUrl,
        lambdaUrl: serving.lambdaUrl,
        inboundDomain: serving.inboundDomain,
        pids: serving.pids,
        queues: serving.queues,
        runtime: serving.runtime.kind,
        lambdaInstances: env.SURGE_LAMBDA_INSTANCES,
        // A bench reuses only a twin that hands reservations off as it would itself (load/support/twin.ts).
        handOffAlone: process.env.SURGE_HAND_OFF_ALONE === 'true',
        admin: serving.admin,
      },
      null,
      2,
    ),
    { mode: 0o600 },
  );
}

/**
 * The twin's own parts first, in order (the consumers finish with the stores they use before the
 * stores go), then every service still running, all at once: SIGTERM, SIGKILL after
 * STOP_GRACE_MS. A twin still starting gets only the second step, for what has started so far.
 */
async function stop(signal: NodeJS.Signals): Promise<never> {
  process.stdout.write(`surge stopping (${signal})\n`);
  // A stop that overruns (this thread starved by a busy machine, or the exit joining worker threads
  // still busy at a cold start) ends anyway: what the twin started is killed, then the twin.
  setTimeout(() => {
    process.stderr.write(`surge stop overran ${STOP_DEADLINE_MS / 1000} s: killing what is left\n`);
    killAllChildren();
    process.kill(process.pid, 'SIGKILL');
  }, STOP_DEADLINE_MS).unref();
  rmSync(stateFile, { force: true });
  if (twin) {
    const deadline = new Promise<void>((resolve) => setTimeout(resolve, ORDERLY_STOP_MS).unref());
    await Promise.race([twin.stop(), deadline]).catch((error: Error) => process.stderr.write(`surge stop: ${error.message}\n`));
  }
  await stopAllChildren();
  process.exit(0);
}

// Before the first await, so before anything starts: a signal that arrives while the twin is
// starting stops what has started so far, instead of killing this process and orphaning it.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (twinProcess) twinProcess.kill(signal);
    else stopping ??= stop(signal);
  });
}

if (flags.fresh) forgetStoredData(env.SURGE_STATE_DIR);
mkdirSync(env.SURGE_STATE_DIR, { recursive: true });
if (env.SURGE_AWS_STORES === 'true') {
  // Functions verify the stores' certificates against the process's trust store, as on AWS; only
  // a process started with NODE_EXTRA_CA_CERTS trusts the twin's CA, so the twin runs in one.
  const { caFile } = await ensureTwinCertificates(join(env.SURGE_STATE_DIR, 'tls'));
  if (stopping) await stopping;
  if (process.env.NODE_EXTRA_CA_CERTS !== caFile) {
    const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
      stdio: 'inherit',
      env: { ...process.env, NODE_EXTRA_CA_CERTS: caFile },
    });
    twinProcess = child;
    const code = await new Promise<number>((resolve) => child.once('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0))));
    process.exit(code);
  }
}

const extraFunctionsModule = env[EXTRA_FUNCTIONS_ENV];
const extraFunctions = extraFunctionsModule
  ? ((await import(pathToFileURL(resolve(extraFunctionsModule)).href)) as { extraFunctions: ExtraFunction[] }).extraFunctions
  : [];

twin = await startTwin({
  port: env.PORT,
  stateDir: env.SURGE_STATE_DIR,
  database: env.SURGE_DATABASE,
  extraFunctions,
  smtpPort: env.SMTP_PORT,
  durableRedis: env.SURGE_REDIS_DURABLE === 'true',
  verdicts: parseVerdicts(env.SURGE_SES_VERDICTS),
  bundles: env.SURGE_BUNDLES === 'true',
  ...(env.SURGE_LAMBDA_INSTANCES ? { lambdaInstances: env.SURGE_LAMBDA_INSTANCES } : {}),
  awsStores: env.SURGE_AWS_STORES === 'true',
  redisCluster: env.SURGE_REDIS_CLUSTER === 'true',
  edge: env.SURGE_EDGE === 'true',
  ...(env.SURGE_FUNCTIONS_SQS_ENDPOINT ? { functionsSqsEndpoint: env.SURGE_FUNCTIONS_SQS_ENDPOINT } : {}),
  deliverTwice: env.SURGE_DELIVER_TWICE === 'true',
  onListening: (url) => process.stdout.write(`surge starting     ${url}  (answers 503 until ready)\n`),
  // The state file names the processes' pids; a restarted one has a new pid.
  onRestart: () => {
    if (twin && !stopping) writeStateFile(twin);
  },
}).catch((error: unknown) => {
  // A stop while starting makes the start fail; the stop under way ends this process.
  if (stopping) return stopping;
  throw error;
});
if (stopping) await stopping;

writeStateFile(twin);

/**
 * The twin keeps Redis's and MariaDB's data under its state directory from one start to the next;
 * --fresh removes it first (the bundles and certificates stay, so the start stays quick). Refused
 * while a twin of that directory is running.
 */
function forgetStoredData(stateDir: string): void {
  const running = (() => {
    try {
      const { pid } = JSON.parse(readFileSync(stateFile, 'utf8')) as { pid: number };
      process.kill(pid, 0);
      return pid;
    } catch {
      return undefined;
    }
  })();
  if (running !== undefined) throw new Error(`--fresh: a twin of ${stateDir} is running (pid ${running}); stop it first`);
  for (const store of ['redis', 'redis-cluster', 'mariadb']) rmSync(join(stateDir, store), { recursive: true, force: true });
}

/** What is printed leaves out any password; the state file has them for the twin's own tools. */
function withoutPassword(url: string): string {
  const shown = new URL(url);
  if (shown.password) shown.password = '****';
  return shown.toString();
}

const lines = [
  ...(env.SURGE_EDGE === 'true'
    ? [
        ['edge', `${twin.url}  (CloudFront and WAF as the prod stack builds them; try: curl -i ${twin.url}/health)`],
        ['gateway', `${twin.gatewayUrl}  (API Gateway's own endpoint: refused without the edge's origin header)`],
      ]
    : [['gateway', `${twin.url}  (try: curl -i ${twin.url}/health)`]]),
  ['redis', `${withoutPassword(twin.redisUrl)}${env.SURGE_REDIS_CLUSTER === 'true' ? '  (a node of a 3-master cluster)' : ''}`],
  ['mariadb', twin.databaseUrl],
  ['sqs+s3', twin.emulatorUrl],
  ['queue', `${twin.queues.reservations.url}  (dlq ${twin.queues.reservations.deadLetterUrl})`],
  ['smtp', `${twin.smtpUrl}  (mail for <token>@${twin.inboundDomain}; GET /me/inbox-address tells a reader's)`],
  ['lambda', `${twin.lambdaUrl}  (Lambda's Invoke API, for operators' tools: npm run redrive -- --failed-mail)`],
  ...demoAccounts.map((a) => [`login ${a.role}`, `${a.email} / ${a.password}`]),
  ...(twin.demoFeedPath ? [['feed user', `${twin.url}${twin.demoFeedPath}  (Atom; /json/ for JSON Feed; what the demo user's inbox address receives)`]] : []),
];
for (const [name, value] of lines) process.stdout.write(`surge ${name!.padEnd(12)} ${value}\n`);
process.stdout.write('surge ready; Ctrl-C or SIGTERM stops everything\n');
