/**
 * `npm run bench -- <scenario> [--connections N] [--duration S] [--bundles [--lambda-instances N]] [--hand-off alone]`
 *
 * Loads the running twin (or starts one) with autocannon, its functions run from their sources or,
 * with --bundles, as the bundles `cdk deploy` uploads (--lambda-instances: in Lambda's instance model), measures the gateway's ceiling (a trivial
 * function behind the same gateway) in the same run, and prints one JSON object as its last line.
 * With --hand-off alone, on a twin of its own, each order or coupon is handed to the queue in a
 * call of its own, as an instance of Lambda's default compute (one invocation at a time) would send
 * it, where the twin's shared instance coalesces the sends of its concurrent requests as the
 * stack's Managed Instances do with those each environment runs at once.
 * Progress goes to stderr. Exits non-zero when an invariant does not hold. Every run also writes
 * an HTML report with plots over time (load/reports/<scenario>-<time>.html; see support/report).
 */
import { printResult } from './support/result-line';
import { constants } from 'node:os';
import { parseArgs } from 'node:util';
import { CEILING_PATH } from '../infra/twin/routes';
import { stopTwinProcesses } from '../infra/twin/twin-process';
import { floorRequest } from './support/floor';
import { againstCeiling, drive } from './support/measure';
import { designWindows, startCpuMeter } from './support/cpu';
import { PROFILE_INTERVAL_US, readProfiles, workerProfilesFlushed } from './support/cpu-profile';
import { designCpu, productPerWindow, topFunctions } from './support/cpu-split';
import { round } from './support/round';
import { writeReport, type BenchReport } from './support/report';
import { startTimeline } from './support/timeline';
import type { Design, Scenario } from './support/scenario';
import { acquireTwin } from './support/twin';

/**
 * HTTP scenarios are compared with the gateway's ceiling: in turns with their steady load
 * ('alternating'), or measured once before a load that is a race to a fixed end ('before'). Mail
 * arrives over SMTP, so has none.
 */
const scenarios: Record<
  string,
  {
    load: () => Promise<Scenario>;
    httpCeiling: 'alternating' | 'before' | false;
    runtime?: { bundles: true; lambdaInstances: number };
    twin?: { fresh: true; profiled: false };
  }
> = {
  sessions: { load: async () => (await import('./scenarios/sessions')).sessions, httpCeiling: 'alternating' },
  orders: { load: async () => (await import('./scenarios/orders')).orders, httpCeiling: 'before' },
  catalog: { load: async () => (await import('./scenarios/catalog')).catalog, httpCeiling: 'alternating' },
  coupons: { load: async () => (await import('./scenarios/coupons')).coupons, httpCeiling: 'before' },
  mail: { load: async () => (await import('./scenarios/mail')).mail, httpCeiling: false },
  abuse: { load: async () => (await import('./scenarios/abuse')).abuse, httpCeiling: 'before' },
  'hot-item': { load: async () => (await import('./scenarios/hot-item')).hotItem, httpCeiling: false },
  feeds: { load: async () => (await import('./scenarios/feeds')).feeds, httpCeiling: 'alternating' },
  'waiting-room': { load: async () => (await import('./scenarios/waiting-room')).waitingRoom, httpCeiling: 'alternating' },
  // A cold fleet is what it measures: always bundles in Lambda's instance model, 100 instances a function unless told otherwise.
  // Always its own twin, unprofiled (see acquireTwin): a fleet warmed by earlier load is not an opening.
  opening: {
    load: async () => (await import('./scenarios/opening')).opening,
    httpCeiling: false,
    runtime: { bundles: true, lambdaInstances: 100 },
    twin: { fresh: true, profiled: false },
  },
};

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    connections: { type: 'string', default: '50' },
    duration: { type: 'string', default: '10' },
    bundles: { type: 'boolean', default: false },
    'lambda-instances': { type: 'string' },
    'hand-off': { type: 'string', default: 'coalesced' },
  },
});
const name = positionals[0] ?? '';
if (!(name in scenarios) || !['coalesced', 'alone'].includes(values['hand-off'])) {
  process.stderr.write(
    `usage: npm run bench -- <${Object.keys(scenarios).join('|')}> [--connections N] [--duration S] [--bundles [--lambda-instances N]] [--hand-off alone]\n`,
  );
  process.exit(2);
}
const log = (message: string) => process.stderr.write(`bench: ${message}\n`);
const connections = Number(values.connections);
const duration = Number(values.duration);

// Stopped by a signal, the bench stops the twins it started (and all they started) before it exits.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void stopTwinProcesses().finally(() => process.exit(128 + constants.signals[signal])));
}

const forced = scenarios[name]!.runtime;
const instances = values['lambda-instances'] ? Number(values['lambda-instances']) : forced?.lambdaInstances;
const runtime = { bundles: values.bundles || Boolean(instances), ...(instances ? { lambdaInstances: instances } : {}) };
// Neither GET /me nor the opening is compared with a baseline: a running twin without them will do.
const handOffAlone = values['hand-off'] === 'alone';
const twin = await acquireTwin(log, !['sessions', 'opening'].includes(name), runtime, { ...scenarios[name]!.twin, ...(handOffAlone ? { handOffAlone } : {}) });
// The bench process too: the load generator and the contended loops share the two cores with the twin.
const timeline = startTimeline({ ...twin.pids, bench: process.pid });
let report: BenchReport | undefined;
let designs: Record<string, Design> = {};
let timelineData: ReturnType<typeof timeline.stop> | undefined;
try {
  const scenario = scenarios[name]!;
  const run = await scenario.load();
  const ceilingLoad = { url: `${twin.url}${CEILING_PATH}`, connections, duration };
  const measuredBefore = scenario.httpCeiling === 'before' ? await ceilingBefore(ceilingLoad) : undefined;
  const result = await run({
    twin,
    runtime,
    connections,
    duration,
    log,
    againstCeiling: async (load, label, floor) =>
      againstCeiling(
        { ...load, connections, duration },
        ceilingLoad,
        label,
        twin.pids,
        log,
        'surge',
        floor && { url: twin.url, connections, duration, requests: [{ method: 'GET', ...(await floorRequest(twin.redisUrl, floor)) }] },
      ),
  });
  const ceiling = result.ceiling ?? measuredBefore;
  designs = {
    ...result.designs,
    ...(ceiling && !result.designs?.ceiling ? { ceiling: { label: "the gateway's ceiling", load: ceiling } } : {}),
    ...(result.floor && !result.designs?.floor
      ? { floor: { label: 'the floor: one Redis GET of as many bytes, behind the same gateway', load: result.floor } }
      : {}),
  };
  if (scenario.httpCeiling === 'alternating' && !result.ceiling) throw new Error(`${name} did not measure against the ceiling`);
  const invariants = Object.fromEntries(
    Object.entries(result.invariants).map(([key, v]) => [key, { ...v, ok: JSON.stringify(v.expected) === JSON.stringify(v.actual) }]),
  );
  report = {
    scenario: name,
    // The floor first: what the path is held to (support/floor.ts); the product CPU above it is added with the comparison.
    ...(result.floor ? { ratio_to_floor: round(result.load.rps / result.floor.rps, 3), floor_rps: result.floor.rps } : {}),
    ...result.load,
    ...(ceiling ? { ceiling_rps: ceiling.rps, ratio_to_ceiling: round(result.load.rps / ceiling.rps, 3), ceiling_measured: scenario.httpCeiling } : {}),
    ...(result.baseline ? { baseline: result.baseline } : {}),
    ...result.extra,
    connections,
    duration_s: duration,
    functions_run_as: runtime.lambdaInstances
      ? `bundles, Lambda's instance model (at most ${runtime.lambdaInstances} instances each)`
      : runtime.bundles
        ? 'bundles, one shared instance each'
        : 'sources, one shared instance each',
    ...(handOffAlone
      ? { hand_off_sent: "alone: each reservation in a SendMessageBatch of its own, as an instance of Lambda's default compute would send it" }
      : {}),
    invariants,
  };
  timelineData = timeline.stop();
  if (twin.profileDir) await workerProfilesFlushed(twin.profileDir, Date.now());
  process.exitCode = Object.values(invariants).every((v) => v.ok) ? 0 : 1;
} finally {
  await twin.stop();
}
// The twin's processes write their profiles as they exit, so the split comes once it has stopped.
if (report && timelineData) {
  const compared = comparison(designs, twin.profileDir, scenarios[name]!.twin?.profiled === false);
  const { surge, floor } = compared.comparison as Record<string, { product_ms_per_request?: number } | undefined>;
  const aboveFloor =
    surge?.product_ms_per_request !== undefined && floor?.product_ms_per_request !== undefined
      ? {
          product_ms_per_request: surge.product_ms_per_request,
          floor_product_ms_per_request: floor.product_ms_per_request,
          product_ms_above_floor: round(surge.product_ms_per_request - floor.product_ms_per_request, 4),
        }
      : {};
  // The floor's figures lead, after the ratio to it.
  const { scenario, ratio_to_floor, ...rest } = report;
  report = { scenario, ...(ratio_to_floor !== undefined ? { ratio_to_floor } : {}), ...aboveFloor, ...rest };
  Object.assign(report, compared);
  log(`report: ${writeReport(report, timelineData)}`);
}
// After the twin has stopped, so that nothing it or this process logs while stopping follows the result.
await printResult(report);

/** The ceiling measured once before a race, its CPU kept for the comparison. */
async function ceilingBefore(load: Parameters<typeof drive>[0]) {
  const cpu = startCpuMeter(twin.pids, 'ceiling');
  const run = await drive(load, 'ceiling', log);
  cpu.perRequest(run.requests);
  return run;
}

/**
 * Surge against every design it was compared with, each with its CPU per request by component
 * (cpu-split.ts), and the functions that spent the most of Surge's. Without profiles (a running
 * twin the bench did not start, or a scenario's twin unprofiled by design) the functions' share
 * cannot be told from the stand-ins' beside it.
 */
function comparison(designs: Record<string, Design>, profileDir: string | undefined, unprofiledByDesign: boolean) {
  const threads = profileDir ? readProfiles(profileDir) : [];
  const windows = designWindows();
  const surge = designs.surge;
  const surgeWindows = windows.filter((w) => w.design === 'surge');
  // Each run's product alone as well: on two shared cores one design's own figure moves 15 % between
  // runs, so a ratio near a goal reads differently run by run than over the runs together.
  const surgePerRun = productPerWindow(surgeWindows, threads);
  const out = Object.fromEntries(
    Object.entries(designs).map(([key, design]) => {
      const measured = key === 'surge' ? surgeWindows : windows.filter((w) => w.design === key);
      const perRun = key === 'surge' ? surgePerRun : productPerWindow(measured, threads);
      // Not against the ceiling, whose function does nothing: its product is noise around zero.
      const pairedWithSurge = key !== 'surge' && key !== 'ceiling' && perRun.length > 1 && perRun.length === surgePerRun.length && perRun.every((ms) => ms > 0);
      return [
        key,
        {
          label: design.label,
          rps: design.load.rps,
          p99_ms: design.load.p99_ms,
          ...(surge ? { ratio: round(surge.load.rps / design.load.rps, 2) } : {}),
          ...(design.lambda_per_request ? { lambda_per_request: design.lambda_per_request } : {}),
          ...(measured.length ? designCpu(measured, threads) : {}),
          ...(perRun.length > 1 ? { product_ms_per_run: perRun } : {}),
          ...(pairedWithSurge ? { surge_product_ratio_per_run: perRun.map((ms, i) => round(surgePerRun[i]! / ms, 3)) } : {}),
        },
      ];
    }),
  );
  return {
    comparison: out,
    cpu_profile: threads.length
      ? {
          method: `V8 --cpu-prof samples every ${PROFILE_INTERVAL_US / 1000} ms in the twin's node processes; functions' share of a shared process = its samples whose stack reaches the product's code first (cpu-profile.ts)`,
          top_functions: topFunctions(surgeWindows, threads),
        }
      : {
          method: unprofiledByDesign
            ? "none: this scenario's twin runs unprofiled (a sampler in every instance thread slows a cold fleet); functions are counted with the process that hosts them"
            : 'none: the bench used a twin it did not start, so no profiles; functions are counted with the process that hosts them',
        },
  };
}
