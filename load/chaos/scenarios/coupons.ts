/**
 * The redis-failover and queue-faults scenarios for a deal: a crowd racing for its coupons through
 * a Multi-AZ failover with replication behind, then, on a deal and a twin of its own, through the
 * functions' SQS sends failing. Two phases, one after the other, each the scenario itself run with
 * --coupons in a process of its own, so each keeps the crowd, scale and timing it has for orders:
 * a twin gets its Redis pair or its queue's fault proxy at start, and a process's shared clients
 * serve one twin. The report has each phase's own under `phases`, every invariant of each named
 * `<phase>:<invariant>`, and the counts of both summed.
 */
import { runChaosProcess } from '../process';
import type { ChaosOptions, ChaosReport } from '../report';

const PHASES = ['redis-failover', 'queue-faults'] as const;

/** The counts that add up across phases. */
const SUMMED = ['acknowledged', 'confirmed_rows', 'oversold', 'lost_acknowledged', 'duplicates', 'rejected_acknowledged', 'http_5xx', 'http_503'] as const;

export async function run(options: ChaosOptions): Promise<ChaosReport> {
  const phases: Partial<Record<(typeof PHASES)[number], ChaosReport>> = {};
  for (const phase of PHASES) {
    options.log(`coupons: phase ${phase}`);
    phases[phase] = await runChaosProcess(phase, { ...options, kind: 'coupons' }, { log: options.log });
  }
  const reports = Object.entries(phases);
  const summed = Object.fromEntries(SUMMED.map((field) => [field, reports.reduce((sum, [, r]) => sum + r[field], 0)])) as Record<
    (typeof SUMMED)[number],
    number
  >;
  return {
    scenario: 'coupons',
    ...summed,
    recovered_s: Math.max(...reports.map(([, r]) => r.recovered_s)),
    invariants: Object.fromEntries(reports.flatMap(([phase, r]) => Object.entries(r.invariants).map(([name, ok]) => [`${phase}:${name}`, ok]))),
    kind: 'coupons',
    scale: options.scale,
    functions_run_as: options.bundles ? 'bundles' : 'sources',
    phases,
  };
}
