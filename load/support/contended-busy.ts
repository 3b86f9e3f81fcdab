/**
 * The cores a contended run kept busy: its store (Redis, MariaDB), the bench's own process and the
 * whole machine. The bench's process stands in for a fleet of functions that, on AWS, calls from
 * machines of its own; here it shares the machine's cores with the store. A part at a full core is
 * what bounded the run; below that, these figures show what did not.
 *
 * Redis runs commands on one thread, so its limit is one busy core: the calls a second it would
 * take with that core full, its calls over the CPU seconds they took. Only the script's side is
 * taken to its limit so: MariaDB runs a statement per connection on threads of their own, and a
 * hot row's lock lets through one at a time, so its CPU says nothing simple about its limit.
 */
import { availableParallelism } from 'node:os';
import { machineCpuSeconds, processCpuSeconds } from './cpu';
import { redisCpuSeconds, type Shard } from './redis-shards';
import { round } from './round';

export interface Busy {
  /** Cores of Redis, every master, from INFO (getrusage, to the microsecond). */
  redis: number;
  /** Cores of MariaDB, from /proc; null when the twin's database is not a process it started. */
  mariadb: number | null;
  /** Cores of the bench's own process, which drives the calls. */
  bench: number;
  /** Cores of the whole machine, of `cores`. */
  machine: number;
}

/** A contended run as its busy cores are read: how long it took and what was busy. */
export interface BusyRun {
  seconds: number;
  busy: Busy;
}

/** Runs `run`, and says how busy each part was over it, in cores. */
export async function busyCores<T>(
  pids: Record<string, number | undefined>,
  redisShards: Shard[],
  run: () => Promise<T>,
): Promise<{ value: T; seconds: number; busy: Busy }> {
  const database = pids.database;
  const before = { redis: await redisCpuSeconds(redisShards), mariadb: processCpuSeconds(database), machine: machineCpuSeconds(), bench: process.cpuUsage() };
  const start = process.hrtime.bigint();
  const value = await run();
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const bench = process.cpuUsage(before.bench);
  const after = { redis: await redisCpuSeconds(redisShards), mariadb: processCpuSeconds(database), machine: machineCpuSeconds() };
  return {
    value,
    seconds,
    busy: {
      redis: (after.redis - before.redis) / seconds,
      mariadb: database ? (after.mariadb - before.mariadb) / seconds : null,
      bench: (bench.user + bench.system) / 1e6 / seconds,
      machine: (after.machine - before.machine) / seconds,
    },
  };
}

/** Busy cores averaged over runs, weighting each by its length, to two places. */
export function meanBusy(runs: readonly BusyRun[]): Busy {
  if (runs.length === 0) throw new Error('meanBusy: no runs');
  const total = runs.reduce((sum, r) => sum + r.seconds, 0);
  const mean = (part: 'redis' | 'bench' | 'machine') => round(runs.reduce((sum, r) => sum + r.busy[part] * r.seconds, 0) / total, 2);
  const mariadb = runs.every((r) => r.busy.mariadb !== null) ? round(runs.reduce((sum, r) => sum + r.busy.mariadb! * r.seconds, 0) / total, 2) : null;
  return { redis: mean('redis'), mariadb, bench: mean('bench'), machine: mean('machine') };
}

/**
 * A contended comparison's busy cores, the script's limit at one busy Redis core (its calls over
 * the Redis CPU seconds they took, every master's), and each MySQL design's measured rate set
 * against that limit.
 */
export function contendedBusy<Name extends string>(
  scriptRuns: readonly (BusyRun & { calls: number })[],
  names: readonly Name[],
  baseline: (name: Name) => { ratePerSecond: number; runs: readonly BusyRun[] },
) {
  const redisSeconds = scriptRuns.reduce((sum, r) => sum + r.busy.redis * r.seconds, 0);
  if (!(redisSeconds > 0)) throw new Error("contendedBusy: the script's runs took no Redis CPU");
  const scriptLimit = Math.round(scriptRuns.reduce((sum, r) => sum + r.calls, 0) / redisSeconds);
  const baselines = names.map((name) => [name, baseline(name)] as const);
  return {
    cores: availableParallelism(),
    busy_cores: { script: meanBusy(scriptRuns), ...Object.fromEntries(baselines.map(([name, b]) => [name, meanBusy(b.runs)])) } as Record<
      'script' | Name,
      Busy
    >,
    script_limit_per_s: scriptLimit,
    ratios_at_script_limit: Object.fromEntries(baselines.map(([name, b]) => [name, round(scriptLimit / b.ratePerSecond, 1)])) as Record<Name, number>,
    method:
      "Cores each part was busy over the runs: Redis from INFO (every master: on a cluster the idle ones too, which understates the script's limit), MariaDB and the bench's process from /proc, the machine from /proc/stat. The bench's process drives the calls, as the fleet would from machines of its own. Redis runs commands on one thread, so the script's limit is its calls over the Redis CPU seconds they took (one busy core); only the script's side is taken to a limit, each MySQL design's rate is as measured",
  };
}
