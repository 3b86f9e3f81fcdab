import { mkdirSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { profilingEnv } from './cpu-profile';
import { readRunningTwin } from '../../infra/twin/running';
import { EXTRA_FUNCTIONS_ENV } from '../../infra/twin/extra-functions';
import { startTwinProcess, type TwinInfo } from '../../infra/twin/twin-process';

export type { TwinInfo };

export interface BenchTwin extends TwinInfo {
  /** True when this bench started the twin, and so stops it. */
  owned: boolean;
  /** Where the twin's node processes write their CPU profiles when they exit: only for a twin the bench started. */
  profileDir?: string;
  stop(): Promise<void>;
}

/**
 * How long a twin the bench starts may take to serve: in bundle mode it builds every bundle and
 * warms every function first, which took 110 s on two busy cores. A twin that cannot start exits
 * with its reason well before this.
 */
export const TWIN_START_TIMEOUT_MS = 300_000;

const BASELINES_MODULE = fileURLToPath(new URL('../baselines/table.ts', import.meta.url));
const BENCH_STATE_DIR = '.local/bench';
const PROFILE_DIR = resolve(BENCH_STATE_DIR, 'profiles');
/** The stores' data directories in the state dir (infra/twin/services/services.ts). */
const STORE_DIRS = ['mariadb', 'redis'];
/** Where a twin the bench starts in bundle mode builds the bundles it runs (infra/twin/function-runners.ts). */
export const BENCH_BUNDLES_DIR = resolve(BENCH_STATE_DIR, 'bundles');

function alive(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function healthy(info: TwinInfo): Promise<boolean> {
  try {
    return (await fetch(`${info.url}/health`)).ok;
  } catch {
    return false;
  }
}

async function servesBaselines(info: TwinInfo): Promise<boolean> {
  const res = await fetch(`${info.url}/__baseline/conditional-autocommit/items/probe/orders`, { method: 'POST' });
  return res.status !== 404;
}

/** How the bench wants the functions run: their sources (the default), or their bundles, optionally in Lambda's instance model. */
export interface BenchRuntime {
  bundles?: boolean;
  lambdaInstances?: number;
}

const runsAs = (info: TwinInfo, runtime: BenchRuntime) =>
  (info.runtime ?? 'source') === (runtime.bundles ? 'bundles' : 'source') &&
  (info.lambdaInstances ?? undefined) === runtime.lambdaInstances &&
  !info.handOffAlone;

/**
 * The twin `npm start` left running, or a fresh one in its own state dir that is stopped afterwards.
 * `fresh`: always a new one (a cold fleet). `profiled: false`: its processes write no CPU profile,
 * whose sampling, in every worker thread of Lambda's instance model, slowed a sale's opening
 * twentyfold (22 against 423 req/s). `handOffAlone`: a new one whose functions hand each reservation
 * off alone, as an instance of Lambda's default compute does (SURGE_HAND_OFF_ALONE).
 */
export async function acquireTwin(
  log: (msg: string) => void,
  needsBaselines: boolean,
  runtime: BenchRuntime = {},
  options: { fresh?: boolean; profiled?: boolean; handOffAlone?: boolean } = {},
): Promise<BenchTwin> {
  const info = readRunningTwin();
  if (
    !options.fresh &&
    !options.handOffAlone &&
    info &&
    alive(info.pid) &&
    runsAs(info, runtime) &&
    (await healthy(info)) &&
    (!needsBaselines || (await servesBaselines(info)))
  ) {
    log(`using the running twin at ${info.url}`);
    return { ...info, owned: false, stop: async () => undefined };
  }
  const profiled = options.profiled ?? true;
  log(`starting a twin for this run${profiled ? ', its processes profiled' : ''}`);
  rmSync(PROFILE_DIR, { recursive: true, force: true });
  // Fresh stores, as a compare's turn has: MariaDB's data outlived the twin that wrote it, so each
  // bench was measured against every earlier one's rows and general log. After six mail benches
  // (2026-12-06) the issues table held 319 MB and the log 287 MB, and MariaDB's CPU a mail had
  // risen run by run from 1.6 to 3.7 ms.
  for (const store of STORE_DIRS) rmSync(resolve(BENCH_STATE_DIR, store), { recursive: true, force: true });
  if (profiled) mkdirSync(PROFILE_DIR, { recursive: true });
  const twin = await startTwinProcess({
    timeoutMs: TWIN_START_TIMEOUT_MS,
    stateDir: BENCH_STATE_DIR,
    database: 'surge_bench',
    showLogs: true,
    env: {
      // The baselines, served beside Surge's functions so both are measured through the same gateway.
      [EXTRA_FUNCTIONS_ENV]: BASELINES_MODULE,
      SURGE_REDIS_DURABLE: 'false',
      POWERTOOLS_LOG_LEVEL: 'WARN',
      // The bench's own generators send from 127.0.0.1; the abuse bench's flood from other loopback addresses.
      SURGE_LOAD_TEST_SOURCES: '127.0.0.1/32',
      SURGE_BUNDLES: String(Boolean(runtime.bundles)),
      ...(profiled ? profilingEnv(PROFILE_DIR, process.env.NODE_OPTIONS) : {}),
      ...(runtime.lambdaInstances ? { SURGE_LAMBDA_INSTANCES: String(runtime.lambdaInstances) } : {}),
      ...(options.handOffAlone ? { SURGE_HAND_OFF_ALONE: 'true' } : {}),
    },
  });
  return { ...twin, owned: true, ...(profiled ? { profileDir: PROFILE_DIR } : {}) };
}
