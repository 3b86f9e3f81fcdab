/**
 * CPU per request by component for each design a bench measured (Surge, each baseline, the
 * ceiling): the product's share (the functions' own code, Redis, MariaDB), which AWS bills, apart
 * from the twin's stand-ins (API Gateway's emulation, the SQS poller, fauxqs), which it does not.
 *
 * Redis, MariaDB and fauxqs are processes of their own, measured from /proc. The functions share a
 * process with a stand-in — the gateway's (HTTP routes, baselines, the SES listener) and the
 * consumers' (the poller and the writer) — so those two are split by their profiles
 * (cpu-profile.ts): each process's CPU from /proc in the window, divided in the proportion of its
 * samples on each side.
 */
import type { DesignWindow } from './cpu';
import { splitWindow, type Side, type WindowSplit } from './cpu-profile';
import { PRODUCT_COMPONENTS, STAND_IN_COMPONENTS } from './cpu-components';
import { round } from './round';

/** Processes that are wholly one component, by the twin's name for them; every node of a Redis with replicas (`redis_<port>`) is Redis. */
const WHOLE: Record<string, string> = { redis: 'redis', database: 'mariadb', emulator: 'fauxqs' };
const wholeComponent = (name: string): string | undefined => WHOLE[name] ?? (name.startsWith('redis_') ? 'redis' : undefined);
/** Processes that host functions beside a stand-in, and that stand-in's component. */
const SHARED: Record<string, string> = { gateway: 'gateway_emulation', consumers: 'poller' };

export interface DesignCpu {
  cpu_ms_per_request: Record<string, number>;
  product_ms_per_request: number;
  stand_in_ms_per_request: number;
  machine_ms_per_request: number;
  /** Of the shared processes' sampled CPU, the part no frame could place (Node's internals, GC), shared out pro rata. */
  unattributed_share?: number;
}

export interface TopFunction {
  function: string;
  where: string;
  side: Side;
  self_ms_per_request: number;
  share: number;
}

type Threads = Parameters<typeof splitWindow>[0];

/** Adds up every window of a design; without profiles the shared processes are reported whole, under their stand-in's name. */
export function designCpu(windows: readonly DesignWindow[], threads: Threads): DesignCpu {
  const requests = windows.reduce((sum, w) => sum + w.requests, 0) || 1;
  const ms: Record<string, number> = {};
  const add = (component: string, value: number) => (ms[component] = (ms[component] ?? 0) + value);
  let sampled = 0;
  let unattributed = 0;
  let machine = 0;
  for (const window of windows) {
    machine += window.machineCpuMs;
    const counted = new Set<number>();
    for (const [name, { pid, cpuMs }] of Object.entries(window.processes)) {
      // The consumers run in the gateway's own process when the twin was started that way.
      if (counted.has(pid)) continue;
      counted.add(pid);
      const whole = wholeComponent(name);
      if (whole) add(whole, cpuMs);
      else if (SHARED[name]) {
        const { ms: sides } = splitWindow(threads, pid, window.fromUs, window.toUs, name === 'consumers' ? 'consumers' : 'gateway');
        const placed = sides.product + sides.stand_in;
        if (placed === 0) add(SHARED[name], cpuMs);
        else {
          add('functions', (cpuMs * sides.product) / placed);
          add(SHARED[name], (cpuMs * sides.stand_in) / placed);
        }
        sampled += placed + sides.unattributed;
        unattributed += sides.unattributed;
      } else add(name, cpuMs);
    }
  }
  const perRequest = Object.fromEntries(Object.entries(ms).map(([k, v]) => [k, round(v / requests, 4)]));
  const sum = (names: readonly string[]) =>
    round(
      names.reduce((s, n) => s + (perRequest[n] ?? 0), 0),
      4,
    );
  return {
    cpu_ms_per_request: perRequest,
    product_ms_per_request: sum(PRODUCT_COMPONENTS),
    stand_in_ms_per_request: sum(STAND_IN_COMPONENTS),
    machine_ms_per_request: round(machine / requests, 4),
    ...(sampled > 0 ? { unattributed_share: round(unattributed / sampled, 3) } : {}),
  };
}

/**
 * Each of a design's windows' product alone, in the order they ran: a figure added up over several
 * runs hides how far apart they were.
 */
export function productPerWindow(windows: readonly DesignWindow[], threads: Threads): number[] {
  return windows.map((window) => designCpu([window], threads).product_ms_per_request);
}

/** The functions with the most self time over a design's windows, in the processes that host functions. */
export function topFunctions(windows: readonly DesignWindow[], threads: Threads, count = 15): TopFunction[] {
  const requests = windows.reduce((sum, w) => sum + w.requests, 0) || 1;
  const totals = new Map<string, { side: Side; ms: number }>();
  let all = 0;
  for (const window of windows) {
    const shared = new Map(
      Object.entries(window.processes)
        .filter(([name]) => SHARED[name])
        .map(([name, p]) => [p.pid, name === 'consumers' ? ('consumers' as const) : ('gateway' as const)]),
    );
    for (const [pid, rule] of shared) {
      const { self }: WindowSplit = splitWindow(threads, pid, window.fromUs, window.toUs, rule);
      for (const [key, entry] of self) {
        const total = totals.get(key) ?? { side: entry.side, ms: 0 };
        total.ms += entry.ms;
        totals.set(key, total);
        all += entry.ms;
      }
    }
  }
  return [...totals]
    .sort((a, b) => b[1].ms - a[1].ms)
    .slice(0, count)
    .map(([key, { side, ms }]) => {
      const [fn, where] = key.split('\t');
      return { function: fn!, where: where!, side, self_ms_per_request: round(ms / requests, 4), share: round(ms / (all || 1), 3) };
    });
}
