import { readFileSync } from 'node:fs';
import autocannon, { type Options, type Result } from 'autocannon';

/** CPU seconds a process has used so far, from /proc (user + system). */
export function processCpuSeconds(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** Busy CPU seconds of the whole machine so far, summed over cores. */
export function machineCpuSeconds(): number {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = cpu as number[];
  return (user! + nice! + system! + irq! + softirq! + steal!) / 100;
}

export interface CpuMeter {
  /** CPU milliseconds per request, by process name and for the machine. */
  perRequest(requests: number): Record<string, number>;
}

export function startCpuMeter(pids: Record<string, number | undefined>): CpuMeter {
  const start = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, processCpuSeconds(pid)]));
  const machineStart = machineCpuSeconds();
  return {
    perRequest(requests) {
      const out: Record<string, number> = {};
      for (const [name, pid] of Object.entries(pids)) {
        if (pid) out[name] = round(((processCpuSeconds(pid) - start[name]!) * 1000) / requests, 4);
      }
      out.machine = round(((machineCpuSeconds() - machineStart) * 1000) / requests, 4);
      return out;
    },
  };
}

export function round(n: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

export interface LoadResult {
  requests: number;
  ok: number;
  errors: number;
  rps: number;
  p50_ms: number;
  p99_ms: number;
}

/** The mean of repeated runs: on a noisy machine one run says little, and which goes first matters. */
export function meanLoad(runs: LoadResult[]): LoadResult {
  const avg = (pick: (r: LoadResult) => number, digits = 2) => round(runs.reduce((sum, r) => sum + pick(r), 0) / runs.length, digits);
  return {
    requests: avg((r) => r.requests, 0),
    ok: avg((r) => r.ok, 0),
    errors: avg((r) => r.errors, 0),
    rps: avg((r) => r.rps),
    p50_ms: avg((r) => r.p50_ms, 0),
    p99_ms: avg((r) => r.p99_ms, 0),
  };
}

/** Drives load with autocannon, printing progress to stderr; ok means a 2xx answer. */
export async function drive(options: Options, label: string, log: (msg: string) => void): Promise<LoadResult> {
  log(`${label}: ${options.connections} connections for ${options.duration ?? '?'} s …`);
  const result: Result = await autocannon(options);
  const requests = result.requests.total;
  const errors = result.non2xx + result.errors + result.timeouts;
  const summary = {
    requests,
    ok: result['2xx'],
    errors,
    rps: round(requests / result.duration),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
  };
  log(`${label}: ${summary.rps} req/s, p99 ${summary.p99_ms} ms, ${errors} errors`);
  return summary;
}
