/**
 * CPU time from /proc: per process and for the whole machine. Its own module because both the
 * measurements (measure.ts) and the run's timeline (timeline.ts) read it.
 */
import { readFileSync } from 'node:fs';
import { round } from './round';

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
