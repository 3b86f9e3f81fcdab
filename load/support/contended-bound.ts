/**
 * What bounds a contended run: how busy, in cores, its store (Redis, MariaDB) and the bench's own
 * process were while it ran. The bench's process stands in for a fleet of functions that, on AWS,
 * runs on machines of its own; on these two cores it shares the machine with the store. A run
 * whose store is short of its cores while the bench's process is at one is bound by the bench,
 * not by what it measures.
 *
 * Redis runs commands on one thread, so its limit is one core: the calls a second it would take
 * when that core is busy is the run's rate over how busy it was (1 / its CPU per call). MariaDB
 * runs a statement per connection on threads of their own; a contended design that leaves its
 * cores and the bench's idle is bound by its row lock, and its rate is its limit.
 */
import { processCpuSeconds } from './cpu';
import { round } from './round';

export interface Busy {
  /** Cores of Redis (every node) busy on average over the run. */
  redis: number;
  /** Cores of MariaDB. */
  mariadb: number;
  /** Cores of the bench's own process, which drives the calls. */
  bench: number;
}

const storeCpu = (pids: Record<string, number | undefined>, store: 'redis' | 'database') =>
  Object.entries(pids)
    .filter(([name]) => name === store || (store === 'redis' && name.startsWith('redis_')))
    .reduce((sum, [, pid]) => sum + processCpuSeconds(pid), 0);

/** Runs `run`, and says how busy each part was over it, in cores. */
export async function busyCores<T>(pids: Record<string, number | undefined>, run: () => Promise<T>): Promise<{ value: T; seconds: number; busy: Busy }> {
  const start = process.hrtime.bigint();
  const before = { redis: storeCpu(pids, 'redis'), mariadb: storeCpu(pids, 'database'), bench: process.cpuUsage() };
  const value = await run();
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const bench = process.cpuUsage(before.bench);
  const cores = (cpuSeconds: number) => round(cpuSeconds / seconds, 2);
  return {
    value,
    seconds,
    busy: {
      redis: cores(storeCpu(pids, 'redis') - before.redis),
      mariadb: cores(storeCpu(pids, 'database') - before.mariadb),
      bench: cores((bench.user + bench.system) / 1e6),
    },
  };
}

/** A contended run as its bound is read: how long it took and what was busy. */
export interface BusyRun {
  seconds: number;
  busy: Busy;
}

/** Busy cores averaged over runs, weighting each by its length. */
export function meanBusy(runs: readonly BusyRun[]): Busy {
  const total = runs.reduce((sum, r) => sum + r.seconds, 0) || 1;
  const mean = (part: keyof Busy) => round(runs.reduce((sum, r) => sum + r.busy[part] * r.seconds, 0) / total, 2);
  return { redis: mean('redis'), mariadb: mean('mariadb'), bench: mean('bench') };
}

/**
 * A contended comparison's bounds: each side's busy cores, the script's limit at Redis (one busy
 * core: 1 / its Redis CPU per call), and each MySQL design's rate set against that limit.
 */
export function contendedBounds<Name extends string>(
  script: { redisMsPerCall: number; runs: readonly BusyRun[] },
  names: readonly Name[],
  baseline: (name: Name) => { ratePerSecond: number; runs: readonly BusyRun[] },
) {
  const scriptLimit = Math.round(1000 / script.redisMsPerCall);
  return {
    busy_cores: { script: meanBusy(script.runs), ...Object.fromEntries(names.map((name) => [name, meanBusy(baseline(name).runs)])) } as Record<
      'script' | Name,
      Busy
    >,
    script_limit_per_s: scriptLimit,
    ratios_at_script_limit: Object.fromEntries(names.map((name) => [name, round(scriptLimit / baseline(name).ratePerSecond, 1)])) as Record<Name, number>,
    method:
      "Cores each part was busy over the runs, from /proc: the bench's process drives the calls, as the fleet would from machines of its own. Redis runs commands on one thread, so the script's limit is 1 / its Redis CPU per call (one busy core); a MySQL design that leaves MariaDB's and the bench's cores idle is bound by its row lock, and its rate is its limit",
  };
}
