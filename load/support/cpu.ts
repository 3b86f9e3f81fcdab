/**
 * CPU time from /proc: per process and for the whole machine. Its own module because both the
 * measurements (measure.ts) and the run's timeline (timeline.ts) read it.
 */
import { readFileSync } from 'node:fs';
import { monotonicUs } from './cpu-profile';
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
  /** CPU milliseconds per request, by process name and for the machine; ends the window. */
  perRequest(requests: number): Record<string, number>;
}

/** A measured window of one design's load: when it ran, what each process used, and the requests it served. */
export interface DesignWindow {
  design: string;
  fromUs: number;
  toUs: number;
  requests: number;
  /** Process name → its pid and the CPU milliseconds it used in the window. */
  processes: Record<string, { pid: number; cpuMs: number }>;
  machineCpuMs: number;
}

const windows: DesignWindow[] = [];

/** Every window measured for a design so far in this run, for the split by profile once the twin has exited. */
export function designWindows(): readonly DesignWindow[] {
  return windows;
}

/**
 * Starts measuring the twin's processes. With a design (e.g. 'surge', 'for_update', 'ceiling'),
 * the window is also kept for the run's CPU split by component (bench.ts, cpu-split.ts).
 */
export function startCpuMeter(pids: Record<string, number | undefined>, design?: string): CpuMeter {
  const live = Object.entries(pids).filter((entry): entry is [string, number] => Boolean(entry[1]));
  const start = Object.fromEntries(live.map(([name, pid]) => [name, processCpuSeconds(pid)]));
  const machineStart = machineCpuSeconds();
  const fromUs = monotonicUs();
  return {
    perRequest(requests) {
      const toUs = monotonicUs();
      const used = Object.fromEntries(live.map(([name, pid]) => [name, (processCpuSeconds(pid) - start[name]!) * 1000]));
      const machineMs = (machineCpuSeconds() - machineStart) * 1000;
      if (design) {
        windows.push({
          design,
          fromUs,
          toUs,
          requests,
          processes: Object.fromEntries(live.map(([name, pid]) => [name, { pid, cpuMs: used[name]! }])),
          machineCpuMs: machineMs,
        });
      }
      const out: Record<string, number> = {};
      for (const [name] of live) out[name] = round(used[name]! / requests, 4);
      out.machine = round(machineMs / requests, 4);
      return out;
    },
  };
}
