import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { ChaosReport } from '../../load/chaos/report';

/** How long a small scenario may take: a twin's start (bundles built), a few seconds of sale, recovery. */
export const SCENARIO_TIMEOUT_MS = 90_000;

/**
 * `npm run chaos -- <scenario> --small [--bundles]` in a process of its own, as CI runs it (and
 * so each run with the shared clients of its own): its report, the last line of its output.
 */
export async function runChaos(scenario: string, options: { bundles?: boolean } = {}): Promise<ChaosReport> {
  const args = ['--import', 'tsx', 'load/chaos.ts', scenario, '--small', ...(options.bundles ? ['--bundles'] : [])];
  const { stdout } = await promisify(execFile)(process.execPath, args, { timeout: SCENARIO_TIMEOUT_MS - 5_000, maxBuffer: 16 * 1024 * 1024 }).catch(
    // Exit 1 is a report whose invariants failed; anything else has no report to give.
    (error: { code?: number; stdout?: string }) => {
      if (error.code === 1 && error.stdout) return { stdout: error.stdout };
      throw error;
    },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as ChaosReport;
}

/** The names of the invariants a report says failed; none when the scenario held. */
export const failedInvariants = (report: ChaosReport) => Object.entries(report.invariants).flatMap(([name, ok]) => (ok ? [] : [name]));
