/**
 * What Lambda would bill and log for a bench's run window, per function: two readings of the
 * twin's cumulative counts (GET /__twin/invocations, infra/twin/lambda/invocations.ts), one before and
 * one after, turned into figures per request for the cost model (cost.ts).
 */
import { INVOCATIONS_PATH, type InvocationCounts, type TwinInvocations } from '../../infra/twin/lambda/invocations';
import { round } from './round';
import type { TwinInfo } from './twin';

export type Snapshot = TwinInvocations;

/** One function's figures per request of a run (requests: what the run counts, e.g. accepted orders). */
export interface LambdaPerRequest {
  invocations: number;
  billed_ms: number;
  duration_ms: number;
  log_bytes: number;
  /** The function's configured memory, not a per-request figure: what its GB-seconds are counted against. */
  memory_mb: number;
}

/** The twin's counts now, from both its processes. */
export async function snapshotInvocations(twin: Pick<TwinInfo, 'url'>): Promise<Snapshot> {
  const res = await fetch(`${twin.url}${INVOCATIONS_PATH}`);
  if (!res.ok) throw new Error(`GET ${INVOCATIONS_PATH}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Snapshot;
}

/** The processes' counts, by process name; a restarted process began counting again, so its two readings do not subtract. */
function sameProcesses(before: Snapshot, after: Snapshot): [InvocationCounts | undefined, InvocationCounts][] {
  return (Object.keys(after) as (keyof Snapshot)[]).map((name) => {
    const [b, a] = [before[name], after[name]!];
    if (b && (b.pid !== a.pid || b.started_at !== a.started_at)) {
      throw new Error(`the twin's ${name} process restarted between the two readings (pid ${b.pid} → ${a.pid}): its counts began again`);
    }
    return [b, a];
  });
}

/**
 * Each function's figures per request between two snapshots: only the functions invoked in
 * between, so that a line another design's function prints late (a held metrics line, up to 5 s
 * after its last invocation) is not charged to this one; what an invoked function prints after the
 * window is lost the same way, at most a line per function per 5 s. A function counted in both
 * processes is summed.
 */
export function perRequest(before: Snapshot, after: Snapshot, requests: number): Record<string, LambdaPerRequest> {
  if (!(requests > 0)) throw new Error(`per request of ${requests} requests`);
  const sums: Record<string, LambdaPerRequest> = {};
  for (const [b, a] of sameProcesses(before, after)) {
    for (const [id, now] of Object.entries(a.functions)) {
      const then = b?.functions[id];
      const invocations = now.invocations - (then?.invocations ?? 0);
      if (invocations === 0) continue;
      const sum = (sums[id] ??= { invocations: 0, billed_ms: 0, duration_ms: 0, log_bytes: 0, memory_mb: now.memory_mb });
      sum.invocations += invocations;
      sum.billed_ms += now.billed_ms - (then?.billed_ms ?? 0);
      sum.duration_ms += now.duration_ms - (then?.duration_ms ?? 0);
      sum.log_bytes += now.log_bytes - (then?.log_bytes ?? 0);
    }
  }
  return Object.fromEntries(
    Object.entries(sums).map(([id, s]) => [
      id,
      {
        invocations: round(s.invocations / requests, 6),
        billed_ms: round(s.billed_ms / requests, 4),
        duration_ms: round(s.duration_ms / requests, 4),
        log_bytes: round(s.log_bytes / requests, 2),
        memory_mb: s.memory_mb,
      },
    ]),
  );
}
