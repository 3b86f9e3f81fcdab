/**
 * What Lambda would bill and log for each function this process runs, counted from when it
 * started: invocations, their duration as a REPORT line states it, the billed duration (each
 * invocation rounded up to the millisecond), and the bytes CloudWatch Logs would ingest — what
 * the function wrote to stdout and stderr, plus the START, END and REPORT lines Lambda adds to
 * every invocation. The benches read it (GET /__twin/invocations) to price an order.
 *
 * A function's own output is counted where it is apart: a bundle's worker thread (bundle mode).
 * Functions run from their sources share the twin's streams, and telling their writes apart
 * needs an AsyncLocalStorage, which on the twin's Node 20 hooks every promise every function makes:
 * it cost more CPU per request than GET /me's own code gained in a round, so in source mode only
 * Lambda's own three lines are counted, and the cost of logs is measured with --bundles.
 */
/** One function's counts, cumulative since this process started. */
export interface FunctionInvocations {
  invocations: number;
  /** Summed durations, from the event handed to the handler to its result (or the timeout). */
  duration_ms: number;
  /** Summed billed durations: each invocation's rounded up to 1 ms, as Lambda bills since 2020. */
  billed_ms: number;
  /** Bytes CloudWatch Logs would ingest: the function's own output and Lambda's three lines per invocation. */
  log_bytes: number;
  /** The function's configured memory: what a GB-second is counted against. */
  memory_mb: number;
  /**
   * Instances whose init ended (bundle mode: Lambda's cold starts), with their summed init: the CPU
   * their threads used from their start to the bundle imported (Node's own start included, as
   * Lambda's Init Duration includes the runtime's; a worker thread's start is not a Lambda
   * runtime's, so the bundle's import is also counted apart), and the time it took less the time
   * they waited for a core.
   */
  inits?: { count: number; cpu_ms: number; ms: number; import_cpu_ms: number };
}

/** A process's counts: its pid and start tell a later read whether the counts began again (a restarted process). */
export interface InvocationCounts {
  pid: number;
  started_at: string;
  functions: Record<string, FunctionInvocations>;
}

/**
 * What GET /__twin/invocations answers: the gateway's process (the API's functions, the benches'
 * baselines, and the queue consumers when they run in it) and the consumers' own process, when
 * they run in one.
 */
export interface TwinInvocations {
  gateway: InvocationCounts;
  consumers?: InvocationCounts;
}

export const INVOCATIONS_PATH = '/__twin/invocations';

/**
 * Lambda's own lines around each invocation (text log format, which the stack keeps), with their
 * trailing newline as CloudWatch stores them:
 *   START RequestId: <uuid> Version: $LATEST                 71 bytes
 *   END RequestId: <uuid>                                    52 bytes
 *   REPORT RequestId: <uuid>\tDuration: 12.34 ms\tBilled Duration: 13 ms\tMemory Size: 512 MB\tMax Memory Used: 80 MB\t
 *                                                            141 bytes as shown; a byte more per further digit
 * No X-Ray line (the stack traces nothing) and no Init Duration (a cold start's are counted apart, as inits).
 * Max Memory Used is not measured per function here: the REPORT line is sized with a three-digit
 * figure, exact for a function using 100–999 MB and a byte over for one using 10–99 MB.
 */
export function platformLines(requestId: string, durationMs: number, memoryMb: number): string {
  return (
    `START RequestId: ${requestId} Version: $LATEST\n` +
    `END RequestId: ${requestId}\n` +
    `REPORT RequestId: ${requestId}\tDuration: ${durationMs.toFixed(2)} ms\tBilled Duration: ${billedMs(durationMs)} ms\tMemory Size: ${memoryMb} MB\tMax Memory Used: ${MAX_MEMORY_USED_MB} MB\t\n`
  );
}

/** The stand-in for Max Memory Used in the REPORT line: only its digits count. */
const MAX_MEMORY_USED_MB = 100;
/** A request id's shape: Lambda's are UUIDs, 36 characters; only the length counts here. */
const REQUEST_ID = '00000000-0000-0000-0000-000000000000';

/** Lambda bills each invocation's duration rounded up to the next millisecond, at least 1 ms. */
export function billedMs(durationMs: number): number {
  return Math.max(1, Math.ceil(durationMs));
}

const started = new Date().toISOString();
const counts = new Map<string, FunctionInvocations>();

/** What one function counts into; made once per function and kept by its runner. */
export class FunctionMeter {
  readonly counts: FunctionInvocations;

  constructor(
    readonly id: string,
    memoryMb: number,
  ) {
    let own = counts.get(id);
    if (!own) counts.set(id, (own = { invocations: 0, duration_ms: 0, billed_ms: 0, log_bytes: 0, memory_mb: memoryMb }));
    this.counts = own;
  }

  /** One invocation that ran durationMs, with Lambda's three lines for it. */
  invoked(durationMs: number): void {
    this.counts.invocations += 1;
    this.counts.duration_ms += durationMs;
    this.counts.billed_ms += billedMs(durationMs);
    this.counts.log_bytes += Buffer.byteLength(platformLines(REQUEST_ID, durationMs, this.counts.memory_mb));
  }

  /** One instance's init ended: its thread's CPU and its import's (when they could be read), and the time it took. */
  initialised(cpu: { cpuMs: number | undefined; importCpuMs: number | undefined }, ms: number): void {
    const inits = (this.counts.inits ??= { count: 0, cpu_ms: 0, ms: 0, import_cpu_ms: 0 });
    inits.count += 1;
    inits.cpu_ms += cpu.cpuMs ?? 0;
    inits.import_cpu_ms += cpu.importCpuMs ?? 0;
    inits.ms += ms;
  }

  /** Bytes the function wrote to stdout or stderr. */
  wrote(bytes: number): void {
    this.counts.log_bytes += bytes;
  }
}

/** This process's counts, a copy. */
export function invocationCounts(): InvocationCounts {
  return {
    pid: process.pid,
    started_at: started,
    functions: Object.fromEntries([...counts].map(([id, c]) => [id, { ...c, ...(c.inits ? { inits: { ...c.inits } } : {}) }])),
  };
}
