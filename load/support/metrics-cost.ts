import type { Options } from 'autocannon';
import { startTwinProcess } from '../../infra/twin/twin-process';
import { startCpuMeter } from './cpu';
import { drive, meanLoad, type LoadResult } from './measure';
import { round } from './round';
import { TWIN_START_TIMEOUT_MS, type BenchTwin } from './twin';
import { profilingEnv } from './cpu-profile';

export interface MetricsCost {
  on: LoadResult & { gateway_cpu_ms_per_request: number };
  off: LoadResult & { gateway_cpu_ms_per_request: number };
  /** Throughput with metrics over without: below 1 is what they cost. */
  rps_ratio_on_to_off: number;
  /** CPU per request of the process the functions run in, with metrics over without: above 1 is what they cost. */
  cpu_ratio_on_to_off: number;
}

/**
 * What Powertools Metrics costs on a hot path, in the same run: a second twin whose functions
 * run with POWERTOOLS_METRICS_DISABLED=true, on the same stores (so sessions, items and queues are
 * shared and only the functions' process differs), then the hot path against each in turns, on off
 * off on, each for half the duration after a warm-up. CPU is the gateway's process's, where the
 * functions run. `hotPath` builds the load for one turn (a fresh item per turn, say).
 */
export async function metricsCost(
  twin: BenchTwin,
  runtime: { bundles?: boolean; lambdaInstances?: number },
  duration: number,
  hotPath: (url: string, turn: number) => Promise<Options>,
  log: (message: string) => void,
): Promise<MetricsCost> {
  log('starting a second twin, with metrics off, on the same stores');
  const database = new URL(twin.databaseUrl).pathname.slice(1);
  const off = await startTwinProcess({
    timeoutMs: TWIN_START_TIMEOUT_MS,
    stateDir: '.local/bench-metrics-off',
    database,
    env: {
      POWERTOOLS_METRICS_DISABLED: 'true',
      POWERTOOLS_LOG_LEVEL: 'WARN',
      REDIS_URL: twin.redisUrl,
      DATABASE_URL: twin.databaseUrl,
      AWS_ENDPOINT_URL: twin.emulatorUrl,
      SURGE_LOAD_TEST_SOURCES: '127.0.0.1/32',
      SURGE_BUNDLES: String(Boolean(runtime.bundles || runtime.lambdaInstances)),
      ...(runtime.lambdaInstances ? { SURGE_LAMBDA_INSTANCES: String(runtime.lambdaInstances) } : {}),
      // Profiled as the first twin is, or the sampler's own cost (about a seventh of the gateway's CPU) would pass for the metrics'.
      ...(twin.profileDir ? profilingEnv(twin.profileDir, process.env.NODE_OPTIONS) : {}),
    },
  });
  try {
    const sides = { on: { url: twin.url, pid: twin.pids.gateway }, off: { url: off.url, pid: off.pids.gateway } };
    let turn = 0;
    const runOn = async (side: 'on' | 'off', seconds: number, label: string) => {
      const cpu = startCpuMeter({ gateway: sides[side].pid });
      const run = await drive({ ...(await hotPath(sides[side].url, turn++)), duration: seconds }, label, log);
      return { run, cpuMs: cpu.perRequest(run.requests).gateway! };
    };
    for (const side of ['on', 'off'] as const) await runOn(side, Math.max(3, duration / 2), `metrics ${side} (warm-up, not measured)`);
    const turns: Record<'on' | 'off', { run: LoadResult; cpuMs: number }[]> = { on: [], off: [] };
    for (const side of ['on', 'off', 'off', 'on'] as const) turns[side].push(await runOn(side, duration / 2, `metrics ${side}`));
    const summary = (side: 'on' | 'off') => {
      const runs = turns[side];
      const cpu = runs.reduce((sum, t) => sum + t.cpuMs * t.run.requests, 0) / runs.reduce((sum, t) => sum + t.run.requests, 0);
      return { ...meanLoad(runs.map((t) => t.run)), gateway_cpu_ms_per_request: round(cpu, 4) };
    };
    const [on, offSummary] = [summary('on'), summary('off')];
    return {
      on,
      off: offSummary,
      rps_ratio_on_to_off: round(on.rps / offSummary.rps, 3),
      cpu_ratio_on_to_off: round(on.gateway_cpu_ms_per_request / offSummary.gateway_cpu_ms_per_request, 3),
    };
  } finally {
    await off.stop();
  }
}
