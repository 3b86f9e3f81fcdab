import { runChaosProcess } from '../../load/chaos/process';
import type { ChaosReport } from '../../load/chaos/report';

/**
 * Only decides when to give up on a small scenario: a twin's start (bundles built; the harness
 * gives it 420 s), a few seconds of sale, recovery. queue-faults took 70 s on a 2-core machine
 * shared with other suites and 145 s beside two CPU hogs as well; writer-kill with its bundles
 * took over 200 s, most of it the twin's start.
 */
export const SCENARIO_TIMEOUT_MS = 900_000;

/**
 * `npm run chaos -- <scenario> --small [--bundles]` in a process of its own, as CI runs it (and
 * so each run with the shared clients of its own): its report, the last line of its output.
 */
export function runChaos(scenario: string, options: { bundles?: boolean } = {}): Promise<ChaosReport> {
  return runChaosProcess(scenario, { scale: 'small', bundles: options.bundles ?? false, kind: 'orders' }, { timeoutMs: SCENARIO_TIMEOUT_MS - 5_000 });
}

/** The names of the invariants a report says failed; none when the scenario held. */
export const failedInvariants = (report: ChaosReport) => Object.entries(report.invariants).flatMap(([name, ok]) => (ok ? [] : [name]));
