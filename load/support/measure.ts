import autocannon, { type Options, type Result } from 'autocannon';
import { startCpuMeter } from './cpu';
import { round } from './round';
import { currentTimeline } from './timeline';

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

interface CpuWindow {
  cpu: Record<string, number>;
  requests: number;
}

/** CPU milliseconds per request over several separate windows, weighted by their requests. */
function combinedPerRequest(windows: CpuWindow[]): Record<string, number> {
  const total = windows.reduce((sum, w) => sum + w.requests, 0);
  const out: Record<string, number> = {};
  for (const name of Object.keys(windows[0]!.cpu)) out[name] = round(windows.reduce((sum, w) => sum + w.cpu[name]! * w.requests, 0) / total, 4);
  return out;
}

export interface AgainstCeiling {
  load: LoadResult;
  ceiling: LoadResult;
  /** CPU per request while the load ran. */
  cpuPerRequest: Record<string, number>;
  /** CPU per request while the ceiling ran, to set beside it. */
  ceilingCpuPerRequest: Record<string, number>;
  /** The path's floor (support/floor.ts), when one was given: measured in the same turns. */
  floor?: LoadResult;
  floorCpuPerRequest?: Record<string, number>;
}

const WARM_UP_SECONDS = 5;

/**
 * The load and the ceiling in turns, A B B A, each for half the duration, and the means of each,
 * after both have warmed up: measured once before the load, the ceiling caught the machine in
 * whatever mood it was in then (22–32k req/s on the same machine within minutes), and the ratio
 * swung with it. With a floor, the three in turns the same way: ceiling, floor, load, load,
 * floor, ceiling.
 */
export async function againstCeiling(
  load: Options,
  ceiling: Options,
  label: string,
  pids: Record<string, number | undefined>,
  log: (msg: string) => void,
  design = 'surge',
  floor?: Options,
): Promise<AgainstCeiling> {
  const half = (options: Options): Options => ({ ...options, duration: Number(options.duration ?? 10) / 2 });
  // Unmeasured, both first: otherwise each side's first turn pays for compiling its code, and the
  // load has far more to compile and size than the trivial ceiling (the catalog's hit rate took
  // about 9 s of load to settle, from ~22k to ~27k req/s).
  const sides = {
    load: { options: load, label, design },
    ceiling: { options: ceiling, label: 'ceiling', design: 'ceiling' },
    ...(floor ? { floor: { options: floor, label: 'floor', design: 'floor' } } : {}),
  };
  type Turn = keyof typeof sides;
  for (const side of Object.values(sides)) await drive({ ...side.options, duration: WARM_UP_SECONDS }, `${side.label} (warm-up, not measured)`, log);
  const runs: Partial<Record<Turn, LoadResult[]>> = {};
  const windows: Partial<Record<Turn, CpuWindow[]>> = {};
  const turns: Turn[] = floor ? ['ceiling', 'floor', 'load', 'load', 'floor', 'ceiling'] : ['ceiling', 'load', 'load', 'ceiling'];
  for (const turn of turns) {
    const side = sides[turn]!;
    const cpu = startCpuMeter(pids, side.design);
    const run = await drive(half(side.options), side.label, log);
    (windows[turn] ??= []).push({ cpu: cpu.perRequest(run.requests), requests: run.requests });
    (runs[turn] ??= []).push(run);
  }
  return {
    load: sumRequests(runs.load!),
    ceiling: sumRequests(runs.ceiling!),
    cpuPerRequest: combinedPerRequest(windows.load!),
    ceilingCpuPerRequest: combinedPerRequest(windows.ceiling!),
    ...(runs.floor ? { floor: sumRequests(runs.floor), floorCpuPerRequest: combinedPerRequest(windows.floor!) } : {}),
  };
}

/** Means of the rates and latencies, with the requests of all runs added up. */
function sumRequests(runs: LoadResult[]): LoadResult {
  const mean = meanLoad(runs);
  const sum = (pick: (r: LoadResult) => number) => runs.reduce((total, r) => total + pick(r), 0);
  return { ...mean, requests: sum((r) => r.requests), ok: sum((r) => r.ok), errors: sum((r) => r.errors) };
}

/**
 * How long a load may be answered mostly by failures (5xx, timeouts, refused connections) before
 * it is given up on: a twin that cannot serve it would otherwise be waited on for as long as the
 * load lasts (10,000 orders failing at Lambda's 10 s init limit, 100 at a time, took a quarter of
 * an hour), where the bench should fail within a minute and say why.
 */
const FAILING_FOR_S = 30;

/**
 * Watches a load's answers second by second and calls giveUp with what they were once, over the
 * last FAILING_FOR_S seconds, none succeeded or failures outnumbered the rest.
 */
function watchFailures(instance: autocannon.Instance, giveUp: (seen: string) => void): () => void {
  const seconds: Record<string, number>[] = [];
  let current: Record<string, number> = {};
  const count = (what: string) => (current[what] = (current[what] ?? 0) + 1);
  instance.on('response', (_client: unknown, status: number) => count(status >= 500 ? String(status) : 'answered'));
  instance.on('reqError', (error: Error) => count(/timed out/.test(error.message) ? 'timed out' : 'no answer'));
  const timer = setInterval(() => {
    seconds.push(current);
    current = {};
    if (seconds.length > FAILING_FOR_S) seconds.shift();
    if (seconds.length < FAILING_FOR_S) return;
    const totals: Record<string, number> = {};
    for (const second of seconds) for (const [what, n] of Object.entries(second)) totals[what] = (totals[what] ?? 0) + n;
    const answered = totals.answered ?? 0;
    const failed = Object.entries(totals).reduce((sum, [what, n]) => sum + (what === 'answered' ? 0 : n), 0);
    if (answered === 0 || failed > answered)
      giveUp(
        Object.entries(totals)
          .map(([what, n]) => `${what} ×${n}`)
          .join(', ') || 'nothing at all',
      );
  }, 1_000);
  return () => clearInterval(timer);
}

/**
 * A list of fixed requests dealt out among the connections, each given every connections-th one
 * (or, with fewer requests than connections, one of them): every request is still sent, as often
 * as any other. autocannon gives every connection the whole list and builds each request of it for
 * each connection, on the load generator's one thread, before the load begins and inside the run's
 * duration: 2,000 feed polls for 50 connections took 1.9 s of CPU (2026-12-07), in which the twin
 * was idle, so a 5 s run's rate came out a quarter to a third low and the machine's CPU a request
 * high, beside a floor of one request that paid none of it. A request built per call
 * (setupRequest) or read back (onResponse) may depend on its order, so such a list is left whole;
 * so is one sent pipelined, whose requests autocannon will not replace.
 */
function dealtOut(options: Options): Options {
  const { requests, connections = 10, pipelining = 1 } = options;
  if (!requests || requests.length <= 1 || pipelining > 1 || requests.some((r) => r.setupRequest || r.onResponse)) return options;
  let next = 0;
  return {
    ...options,
    // What each connection builds first, before it is given its share.
    requests: [requests[0]!],
    setupClient: (client) => {
      const own = next++ % connections;
      const share = requests.filter((_, i) => i % connections === own);
      client.setRequests(share.length > 0 ? share : [requests[own % requests.length]!]);
      options.setupClient?.(client);
    },
  };
}

/**
 * Drives load with autocannon, printing progress to stderr; ok means a 2xx answer. Each answer's
 * latency also goes to the run's timeline, when there is one (see ./timeline). Fails, rather than
 * waiting the load out, once its answers have been mostly failures for FAILING_FOR_S seconds. A
 * list of fixed requests is dealt out among the connections (dealtOut).
 */
export async function drive(
  options: Options,
  label: string,
  log: (msg: string) => void,
  onResponse?: (status: number, latencyMs: number) => void,
): Promise<LoadResult> {
  log(`${label}: ${options.connections} connections for ${options.duration ?? '?'} s …`);
  const phase = currentTimeline()?.startPhase(label, 'closed', `autocannon, ${options.connections ?? 10} connections`);
  const started = performance.now();
  let lastAnswer = started;
  // Without a callback autocannon returns its tracker made thenable; its types name only the promise.
  const instance = autocannon(dealtOut(options)) as Promise<Result> & autocannon.Instance;
  instance.on('response', () => {
    lastAnswer = performance.now();
  });
  if (phase) instance.on('response', (_client: unknown, _status: number, _bytes: number, latencyMs: number) => phase.answer(latencyMs));
  if (onResponse) instance.on('response', (_client: unknown, status: number, _bytes: number, latencyMs: number) => onResponse(status, latencyMs));
  let failing: string | undefined;
  const stopWatching = watchFailures(instance, (seen) => {
    failing ??= seen;
    instance.stop();
  });
  let result: Result;
  try {
    result = await instance;
  } finally {
    stopWatching();
  }
  phase?.end();
  if (failing) {
    throw new Error(
      `${label}: given up, the twin cannot serve this load: over the last ${FAILING_FOR_S} s its answers were ${failing} (its own errors are above)`,
    );
  }
  const requests = result.requests.total;
  const errors = result.non2xx + result.errors + result.timeouts;
  // autocannon notices the last answer of a fixed amount only at its next one-second tick, which
  // would understate a run of a few seconds by up to a quarter: such a run's rate is taken to its
  // last answer.
  const seconds = options.amount !== undefined && lastAnswer > started ? (lastAnswer - started) / 1000 : result.duration;
  const summary = {
    requests,
    ok: result['2xx'],
    errors,
    rps: round(requests / seconds),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
  };
  log(`${label}: ${summary.rps} req/s, p99 ${summary.p99_ms} ms, ${errors} errors`);
  return summary;
}
