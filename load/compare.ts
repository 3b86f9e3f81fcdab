/**
 * `npm run compare -- [--against 7ace490] [--paths sessions,catalog,orders,mail] [--duration S] [--connections N] [--rounds N]`
 * `npm run compare -- --replica-acks [--redis-cluster [--buckets 3]] [--paths orders] …`
 * `npm run compare -- --against <commit> --paths orders --hand-off alone`
 *
 * Measures each hot path of this checkout against an earlier commit's, A B B A in one run (repeated
 * `--rounds` times: turns on these machines differ by a sixth, so a difference of a few per cent
 * needs more than one round to show): the
 * earlier commit is checked out once into a git worktree (.local/compare/<commit>, its own
 * `npm ci`), and each turn starts that checkout's own twin from its own sources, drives every hot
 * path with today's load generator (support/hot-paths.ts), stops the twin and splits each path's
 * CPU per request by component from the profiles its processes wrote (support/cpu-split.ts).
 * Each turn runs in a process of its own, so no module of one checkout outlives its twin.
 *
 * Prints a table to stderr and one JSON object as its last line: per path, each checkout's product
 * CPU per request (functions + Redis + MariaDB) in each turn and their means, and whether this
 * checkout's mean is at or below the other's. Exits non-zero if a path's invariant (every
 * accepted order stored, every mail filed) did not hold in a turn.
 *
 * With --replica-acks, both sides are this checkout on a primary and its replica (the fault suite's
 * pair, infra/twin/faults/redis-pair.ts), a new pair each turn: A without waiting for the replica
 * (REDIS_REPLICA_ACKS=0), B waiting for it (1), as a deployment with replicas runs: what WAIT costs.
 * With --redis-cluster as well, on the twin's cluster of three masters with a replica each, a new
 * cluster each turn, the orders path's item split into --buckets buckets: the hot item's shape.
 *
 * With --hand-off alone, both sides' twins hand each order to the queue in a call of its own
 * (SURGE_HAND_OFF_ALONE), as instances of Lambda's default compute send them: against a commit that
 * knows the switch (ef7075a or later), since an earlier one coalesces whatever it is told.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startRedisCluster } from '../infra/twin/services/redis-cluster';
import { startRedisPair, type RedisPair } from '../infra/twin/faults/redis-pair';
import { redisCommand } from '../infra/twin/faults/redis-server';
import { startTwinProcess } from '../infra/twin/twin-process';
import { designWindows } from './support/cpu';
import { profilingEnv, readProfiles, workerProfilesFlushed } from './support/cpu-profile';
import { designCpu, topFunctions, type DesignCpu } from './support/cpu-split';
import { driveHotPath, HOT_PATHS, type HotPath } from './support/hot-paths';
import { printResult } from './support/result-line';
import { worktreeOf } from './support/worktree';
import { round } from './support/round';

const { values } = parseArgs({
  options: {
    against: { type: 'string', default: '7ace490' },
    paths: { type: 'string', default: HOT_PATHS.join(',') },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    buyers: { type: 'string', default: '10000' },
    mails: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '1' },
    'replica-acks': { type: 'boolean', default: false },
    'redis-cluster': { type: 'boolean', default: false },
    buckets: { type: 'string', default: '3' },
    'hand-off': { type: 'string', default: 'coalesced' },
    turn: { type: 'string' },
    'turn-acks': { type: 'string' },
  },
});
const log = (message: string) => process.stderr.write(`compare: ${message}\n`);
const paths = values.paths!.split(',') as HotPath[];
for (const path of paths) if (!HOT_PATHS.includes(path)) throw new Error(`unknown path ${path}; the paths are ${HOT_PATHS.join(', ')}`);
// An earlier checkout's twin may know no cluster nor buckets: the cluster compares this checkout with itself.
if (values['redis-cluster'] && !values['replica-acks']) throw new Error('--redis-cluster compares WAIT against none: add --replica-acks');
if (!['coalesced', 'alone'].includes(values['hand-off']!)) throw new Error('--hand-off is coalesced or alone');

const STATE_DIR = resolve('.local/compare');

type PathMeasure = DesignCpu & {
  top_functions: ReturnType<typeof topFunctions>;
  rps?: number;
  p50_ms?: number;
  p99_ms?: number;
  mails_per_s?: number;
  accepted?: number;
  stored?: number;
  mails?: number;
  filed?: number;
};

interface Turn {
  checkout: string;
  paths: Record<string, PathMeasure>;
}

/** The twin's entry and seed moved between rounds; a checkout has one or the other. */
function layoutOf(dir: string) {
  const twinDir = existsSync(resolve(dir, 'infra/twin/main.ts')) ? 'infra/twin' : 'infra/local';
  return { entry: `${twinDir}/main.ts`, seedModule: `${twinDir}/seed.ts` };
}

/** Each node's pid by name (`redis`, `redis_<port>`), so the turn counts every node's CPU as the product's Redis: the twin knows none of a Redis given by URL. */
async function nodePids(ports: number[]): Promise<Record<string, number>> {
  const pids = await Promise.all(ports.map(async (port) => Number(/process_id:(\d+)/.exec(String(await redisCommand(port, 'INFO', 'server')))![1])));
  return Object.fromEntries(ports.map((port, i) => [i === 0 ? 'redis' : `redis_${port}`, pids[i]!]));
}

/** Redis with replicas of the turn's own: the pair, or with --redis-cluster the twin's cluster with a replica per master. */
async function redisWithReplicas(): Promise<{ env: Record<string, string>; pids: Record<string, number>; stop(): Promise<void> }> {
  if (!values['redis-cluster']) {
    const pair: RedisPair = await startRedisPair();
    return { env: { REDIS_URL: pair.url }, pids: await nodePids([pair.primary.port, pair.replica.port]), stop: () => pair.stop() };
  }
  const cluster = await startRedisCluster(resolve(STATE_DIR, 'cluster'), false, { replicas: 1 });
  const nodes = String(await redisCommand(Number(new URL(cluster.url).port), 'CLUSTER', 'NODES'));
  const ports = [...nodes.matchAll(/:(\d+)@/g)].map((match) => Number(match[1]));
  return { env: { REDIS_URL: cluster.url, SURGE_REDIS_CLUSTER: 'true' }, pids: await nodePids(ports), stop: () => cluster.stop() };
}

/** One turn: the checkout's twin started (on a Redis with replicas of its own when acks is given), every path driven, the twin stopped and its profiles read. */
async function runTurn(dir: string, acks?: number): Promise<Turn> {
  const layout = layoutOf(dir);
  const replicated = acks === undefined ? undefined : await redisWithReplicas();
  const stateDir = resolve(STATE_DIR, 'turn');
  const profileDir = resolve(stateDir, 'profiles');
  rmSync(stateDir, { recursive: true, force: true });
  mkdirSync(profileDir, { recursive: true });
  const twin = await startTwinProcess({
    stateDir,
    database: 'surge_compare',
    ownServices: true,
    showLogs: true,
    timeoutMs: 300_000,
    checkout: { dir, entry: layout.entry },
    env: {
      SURGE_REDIS_DURABLE: 'false',
      POWERTOOLS_LOG_LEVEL: 'WARN',
      SURGE_LOAD_TEST_SOURCES: '127.0.0.1/32',
      ...(values['hand-off'] === 'alone' ? { SURGE_HAND_OFF_ALONE: 'true' } : {}),
      ...(replicated ? { ...replicated.env, REDIS_REPLICA_ACKS: String(acks) } : {}),
      ...profilingEnv(profileDir, process.env.NODE_OPTIONS),
    },
  });
  const measured: Record<string, Record<string, number>> = {};
  try {
    // The checkout's own modules (seed, session store) read these when first used.
    Object.assign(process.env, {
      REDIS_URL: twin.redisUrl,
      ...(values['redis-cluster'] ? { REDIS_CLUSTER: 'true' } : {}),
      DATABASE_URL: twin.databaseUrl,
      AWS_ENDPOINT_URL: twin.emulatorUrl,
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
    });
    const options = {
      checkout: dir,
      seedModule: layout.seedModule,
      connections: Number(values.connections),
      durationS: Number(values.duration),
      buyers: Number(values.buyers),
      mails: Number(values.mails),
      ...(values['redis-cluster'] ? { buckets: Number(values.buckets) } : {}),
      log,
    };
    const measuredTwin = { ...twin, pids: { ...twin.pids, ...replicated?.pids } };
    for (const path of paths) measured[path] = await driveHotPath(measuredTwin, options, path);
    await workerProfilesFlushed(profileDir, Date.now());
  } finally {
    await twin.stop();
    await replicated?.stop();
  }
  const threads = readProfiles(profileDir);
  if (threads.length === 0) throw new Error(`the twin of ${dir} wrote no profiles`);
  const windows = designWindows();
  return {
    checkout: dir,
    paths: Object.fromEntries(
      paths.map((path) => {
        const own = windows.filter((w) => w.design === path);
        return [path, { ...measured[path]!, ...designCpu(own, threads), top_functions: topFunctions(own, threads, 10) }];
      }),
    ),
  };
}

function turnInChild(dir: string, acks?: number): Promise<Turn> {
  return new Promise((resolvePromise, reject) => {
    const args = ['--turn', dir, ...(acks === undefined ? [] : ['--turn-acks', String(acks)]), ...process.argv.slice(2)];
    const child = spawn(process.execPath, ['--import', 'tsx', 'load/compare.ts', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('exit', (code) => {
      const last = out.trim().split('\n').pop() ?? '';
      if (code === 0 && last.startsWith('{')) resolvePromise(JSON.parse(last) as Turn);
      else reject(new Error(`the turn on ${dir} failed (exit ${code})`));
    });
  });
}

/** A worktree of the commit, with its own dependencies installed. */
const checkoutOf = (commit: string) => worktreeOf(commit, STATE_DIR, log);

if (values.turn) {
  await printResult(await runTurn(values.turn, values['turn-acks'] === undefined ? undefined : Number(values['turn-acks'])));
  // The checkout's own modules keep their clients open, reconnecting to the stopped twin's stores.
  process.exit(0);
} else {
  const pairs = values['replica-acks'];
  const against = pairs ? 'REDIS_REPLICA_ACKS=0' : values.against!;
  // On pairs, A and B are this checkout without and with WAIT, told apart by name.
  const earlier = pairs ? 'acks=0' : checkoutOf(values.against!);
  // An earlier commit without the switch would coalesce on its side whatever it was told, and the comparison would mean nothing.
  if (values['hand-off'] === 'alone' && !pairs && !readFileSync(resolve(earlier, 'shared/platform/config.ts'), 'utf8').includes('HAND_OFF_ALONE'))
    throw new Error(`${values.against} does not know --hand-off alone (SURGE_HAND_OFF_ALONE): compare against ef7075a or later`);
  const today = pairs ? 'acks=1' : resolve('.');
  const order = Array.from({ length: Number(values.rounds) }, () => [earlier, today, today, earlier]).flat();
  const turns: Turn[] = [];
  for (const [i, side] of order.entries()) {
    log(`turn ${i + 1} of ${order.length}: ${side === today ? (pairs ? 'REDIS_REPLICA_ACKS=1' : 'this checkout') : against}`);
    const turn = pairs ? await turnInChild(resolve('.'), side === today ? 1 : 0) : await turnInChild(side);
    turns.push({ ...turn, checkout: side });
  }
  const side = (dir: string) => turns.filter((t) => t.checkout === dir);
  const mean = (xs: number[]) => round(xs.reduce((a, b) => a + b, 0) / xs.length, 4);
  const result = Object.fromEntries(
    paths.map((path) => {
      const of = (dir: string) => side(dir).map((t) => t.paths[path]!);
      const [before, now] = [of(earlier), of(today)];
      const product = { before: mean(before.map((p) => p.product_ms_per_request)), now: mean(now.map((p) => p.product_ms_per_request)) };
      return [
        path,
        {
          product_ms_per_request: {
            ...product,
            ratio: round(product.now / product.before, 3),
            turns_before: before.map((p) => p.product_ms_per_request),
            turns_now: now.map((p) => p.product_ms_per_request),
          },
          // WAIT's budget (issue 38): product CPU per order at most 10 % more; a checkout's: no more than before.
          within_budget: product.now <= product.before * (pairs ? 1.1 : 1),
          rate: { before: before.map((p) => p.rps ?? p.mails_per_s), now: now.map((p) => p.rps ?? p.mails_per_s) },
          ...(before[0]?.p99_ms === undefined
            ? {}
            : { latency_ms: { before: before.map((p) => [p.p50_ms, p.p99_ms]), now: now.map((p) => [p.p50_ms, p.p99_ms]) } }),
          by_component: { before: before.map((p) => p.cpu_ms_per_request), now: now.map((p) => p.cpu_ms_per_request) },
          top_functions: { before: before[1]!.top_functions, now: now[1]!.top_functions },
        },
      ];
    }),
  );
  const invariants = {
    orders_stored: turns.every((t) => !t.paths.orders || t.paths.orders.stored === t.paths.orders.accepted),
    mail_filed: turns.every((t) => !t.paths.mail || t.paths.mail.filed === t.paths.mail.mails),
  };
  for (const [path, r] of Object.entries(result)) {
    log(
      `${path}: product CPU per request ${r.product_ms_per_request.before} ms (${against}) → ${r.product_ms_per_request.now} ms (now), ×${r.product_ms_per_request.ratio}${r.within_budget ? '' : '  OVER BUDGET'}`,
    );
  }
  process.exitCode = Object.values(invariants).every(Boolean) ? 0 : 1;
  await printResult({ against, order: order.map((dir) => (dir === today ? 'B' : 'A')), hand_off_sent: values['hand-off'], paths: result, invariants });
}
