/**
 * The fault-injection suite's harness: a twin in a process of its own (MariaDB, the emulator and
 * the consumers' process its own, Redis the suite's, handed over through REDIS_URL), a flash sale
 * through its HTTP API (an item's orders, or a deal's coupons: load/chaos/kinds.ts), a fault
 * injected mid-sale, recovery through the reconciliation CLI, then the count, straight from MySQL
 * and the API, of what the buyers were promised against what was stored.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createPool, type Pool } from 'mysql2/promise';
import { startTwinProcess, type TwinInfo, type TwinProcess } from '../../infra/twin/twin-process';
import { adminCookie, pointAtTwin, releaseSharedClients, signedInCrowd } from '../support/crowd';
import { round } from '../support/round';
import { twinEnvironment } from '../../infra/twin/running';
import { until } from '../../shared/platform/wait';
import { SALE_KINDS } from './kinds';
import type { Answers, Ledger } from './count';
import { startChaosRedis, type ChaosRedis } from './redis';
import { reconcile, type ReconcileLine } from './reconcile';
import type { ChaosOptions, ChaosReport } from './report';
import { isFinal, newBuyerKey, startSale, type Attempt, type BuyerOutcome, type Sale } from './sale';

export interface Scale {
  buyers: number;
  units: number;
  /** Arrivals spread over this long. */
  arrivalMs: number;
  /** How long each buyer keeps retrying after it arrived. */
  patienceMs: number;
  /**
   * How long after the sale the harness waits for every invariant to hold; only decides when to
   * give up, since the wait ends as soon as they hold.
   */
  recoveryMs: number;
}

/**
 * full: the flash crowd; small: the same race in a few seconds, for `npm test`. Both give recovery
 * 180 s: beside two CPU hogs each run of the reconciliation CLI took 20 s, and small's former 25 s
 * gave a killed bundle writer two looks before the harness gave up on 41 orders still on their way.
 */
export const SCALES: Record<ChaosOptions['scale'], Scale> = {
  full: { buyers: 2_000, units: 1_000, arrivalMs: 9_000, patienceMs: 60_000, recoveryMs: 180_000 },
  small: { buyers: 300, units: 150, arrivalMs: 2_000, patienceMs: 20_000, recoveryMs: 180_000 },
};

export type Supervised = 'consumers' | 'database';

/** What a scenario's hooks get to work with. */
export interface ChaosRun {
  options: ChaosOptions;
  scale: Scale;
  stateDir: string;
  twin: TwinProcess;
  redis: ChaosRedis;
  db: Pool;
  /** The item on sale, or the deal. */
  owner: string;
  /** The environment that points the reconciliation CLI at this twin. */
  env: Record<string, string>;
  /** Where the twin's fault points (SURGE_FAULTS) log each firing, one line each. */
  faultLog: string;
  /** The pid twin.json names now for a process the twin supervises. */
  pidOf(service: Supervised): number | undefined;
  /** Resolves with the new pid once the twin has started that process again. */
  restarted(service: Supervised, previous: number | undefined, timeoutMs?: number): Promise<number>;
  /** Set once the sale has started. */
  sale?: Sale;
}

export interface Scenario {
  name: string;
  /** A scale of the scenario's own, e.g. a longer sale for a fault that lasts the whole sale. */
  scale?: Partial<Record<ChaosOptions['scale'], Partial<Scale>>>;
  /** Extra environment for the twin, e.g. a fault point armed. */
  twinEnv?(stateDir: string): Record<string, string>;
  /**
   * Starts what serves the sale in place of the twin of this checkout (deploy-mid-sale: an earlier
   * release's, behind a front that will shift to this one's), given what the harness would start
   * its twin with; its `url` is where the buyers go and its `stop` stops all of it.
   */
  startTwin?(start: { stateDir: string; env: Record<string, string>; args: string[]; timeoutMs: number }): Promise<TwinProcess>;
  /**
   * Signs the crowd in, where not as this checkout signs users in (deploy-mid-sale: as the release
   * the sale starts on does, so that its sessions are in that release's format).
   */
  signInCrowd?(twin: TwinInfo, count: number): Promise<{ ids: number[]; cookies: string[] }>;
  /** After the crowd is signed in and the sale opened, before the first request. */
  beforeSale?(run: ChaosRun): Promise<void>;
  /** Reservations acknowledged before the fault, as a share of the units (default a third). */
  faultAfter?: number;
  /**
   * Buyers, as a share of the crowd, who arrive only once the fault is on: the fault calls
   * `run.sale.release()` when it is (or they arrive when it is over), so that it meets load
   * however fast the others were served.
   */
  heldBack?: number;
  /** Injects the fault; resolves once it is over (what it took away is back). */
  fault(run: ChaosRun): Promise<void>;
  /**
   * How many acknowledged reservations the fault took from Redis, where the scenario knows it
   * exactly (the writer may store them before the harness can look, so a look misses them).
   * By default, the acknowledged reservations the API did not find right after the fault.
   */
  lostReservations?(run: ChaosRun): number;
  /** The scenario's own invariants and figures, once everything is counted. */
  assess?(run: ChaosRun, facts: Facts): { invariants?: Record<string, boolean>; extra?: Record<string, unknown> };
}

/** What the harness measured, for a scenario's own assessment. */
export interface Facts {
  outcomes: BuyerOutcome[];
  attempts: Attempt[];
  fault: { from: number; to: number };
  ledger: Ledger;
  answers: Answers;
}

const readInfo = (stateDir: string) => JSON.parse(readFileSync(join(stateDir, 'twin.json'), 'utf8')) as TwinInfo;

/** Percentile of a list of numbers (nearest rank); 0 for none. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Answers by status, e.g. {"202": 150, "409": 150, "503": 12}. */
export function tally(answers: { status?: Attempt['status'] }[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { status } of answers) counts[String(status)] = (counts[String(status)] ?? 0) + 1;
  return counts;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const TWIN_START_GIVE_UP_MS = 420_000;
export const CHAOS_DATABASE = 'surge_chaos';

/**
 * One state dir per scenario and kind: MariaDB is installed into it once, Redis starts empty
 * every run; a scenario's own services may keep theirs there too.
 */
export const stateDirOf = (name: string, options: ChaosOptions) => `.local/chaos/${name}${options.kind === 'orders' ? '' : `-${options.kind}`}`;

export async function runScenario(scenario: Scenario, options: ChaosOptions): Promise<ChaosReport> {
  const { log } = options;
  const kind = SALE_KINDS[options.kind];
  const scale = { ...SCALES[options.scale], ...scenario.scale?.[options.scale] };
  const stateDir = stateDirOf(scenario.name, options);
  const faultLog = join(stateDir, 'faults.log');
  rmSync(faultLog, { force: true });
  const redis = await startChaosRedis(stateDir);
  let twin: TwinProcess | undefined;
  let db: Pool | undefined;
  try {
    log(`${scenario.name}: starting a twin${options.bundles ? ' (bundles)' : ''} with Redis on ${redis.url}`);
    const twinStarting = Date.now();
    const start = {
      stateDir,
      args: options.bundles ? ['--bundles'] : [],
      env: { REDIS_URL: redis.url, POWERTOOLS_LOG_LEVEL: 'ERROR', SURGE_FAULT_LOG: faultLog, ...scenario.twinEnv?.(stateDir) },
      // Only decides when to give up: with its bundles built, a twin took over 180 s to start on a
      // 2-core machine shared with four other suites.
      timeoutMs: TWIN_START_GIVE_UP_MS,
    };
    twin = scenario.startTwin ? await scenario.startTwin(start) : await startTwinProcess({ ...start, database: CHAOS_DATABASE, ownServices: true });
    log(`${scenario.name}: twin started in ${round((Date.now() - twinStarting) / 1000)} s`);
    db = createPool({ uri: twin.databaseUrl, connectionLimit: 4 });
    const owner = `chaos-${scenario.name}-${randomBytes(3).toString('hex')}`;
    const run: ChaosRun = {
      options,
      scale,
      stateDir,
      twin,
      redis,
      db,
      owner,
      env: twinEnvironment(twin),
      faultLog,
      pidOf: (service) => readInfo(stateDir).pids[service],
      async restarted(service, previous, timeoutMs = 60_000) {
        await until(
          async () => {
            const pid = run.pidOf(service);
            return pid !== undefined && pid !== previous;
          },
          timeoutMs,
          `${service} started again`,
          100,
        );
        return run.pidOf(service)!;
      },
    };

    log(`${scenario.name}: signing in ${scale.buyers} buyers, opening ${kind.name} of ${owner} with ${scale.units} units`);
    pointAtTwin(twin);
    const crowd = await (scenario.signInCrowd ?? signedInCrowd)(twin, scale.buyers);
    await releaseSharedClients();
    await kind.open(twin, await adminCookie(twin), owner, scale.units);
    await scenario.beforeSale?.(run);

    const saleStarted = Date.now();
    const sale = startSale({
      url: twin.url,
      kind,
      owner,
      buyers: crowd.ids.map((userId, i) => ({ userId, cookie: crowd.cookies[i]!, key: newBuyerKey() })),
      arrivalMs: scale.arrivalMs,
      patienceMs: scale.patienceMs,
      heldBack: Math.floor(scale.buyers * (scenario.heldBack ?? 0)),
    });
    run.sale = sale;
    await sale.whenAcknowledged(Math.ceil(scale.units * (scenario.faultAfter ?? 1 / 3)));
    const fault = { from: Date.now(), to: 0 };
    log(`${scenario.name}: ${sale.acknowledged.size} ${kind.noun}s acknowledged; injecting the fault`);
    await scenario.fault(run);
    fault.to = Date.now();
    sale.release();
    // What Redis still knows of the reservations acknowledged so far, right after the fault: one
    // in neither Redis nor MySQL was lost there, and its unit may be sold again (rejected).
    const acknowledgedByFault = new Map(sale.acknowledged);
    const afterFault = await kind.answers(twin.url, acknowledgedByFault);
    log(
      `${scenario.name}: fault over after ${round((fault.to - fault.from) / 1000)} s; ${afterFault.notFound.length} of ${acknowledgedByFault.size} acknowledged ${kind.noun}s missing from Redis and MySQL`,
    );

    const outcomes = await sale.finished;
    const attempts = outcomes.flatMap((o) => o.attempts);
    log(
      `${scenario.name}: sale over after ${round((Date.now() - saleStarted) / 1000)} s: ${JSON.stringify(tally(outcomes.map((o) => ({ status: o.final }))))} (final answers)`,
    );

    // Recovery: the writer drains; the CLI relays what is still pending and repairs the counters.
    const lostInRedis = scenario.lostReservations?.(run) ?? afterFault.notFound.length;
    let ledger: Ledger | undefined;
    let answers: Answers | undefined;
    let line: ReconcileLine | undefined;
    let recoveredAt: number | undefined;
    let stableLooks = 0;
    let reconciles = 0;
    const deadline = Date.now() + scale.recoveryMs;
    for (;;) {
      line = (await reconcile(run.env, kind.name, owner, ['--repair', '--relay-after-s', '0'])) ?? line;
      reconciles += 1;
      const previousRows = ledger?.rows;
      ledger = await kind.readLedger(db, owner, sale.acknowledged).catch(() => ledger);
      if (
        ledger &&
        ledger.lostAcknowledged.length === 0 &&
        ledger.duplicates === 0 &&
        ledger.confirmedUnits <= ledger.capacity &&
        ledger.rejectedAcknowledged <= lostInRedis
      ) {
        answers = await kind.answers(twin.url, sale.acknowledged);
        if (answers.found === sale.acknowledged.size) {
          recoveredAt = Date.now();
          break;
        }
      }
      // Nothing left to write and nothing moving: what is missing now stays missing.
      stableLooks = line?.pending === 0 && ledger?.rows === previousRows ? stableLooks + 1 : 0;
      if (stableLooks >= 3 || Date.now() > deadline) break;
      await sleep(500);
    }
    if (!ledger) throw new Error('MySQL could not be read after the fault');
    answers ??= await kind.answers(twin.url, sale.acknowledged);
    const finalLine = (await reconcile(run.env, kind.name, owner, [])) ?? line;

    const http5xx = attempts.filter((a) => typeof a.status === 'number' && a.status >= 500).length;
    const http503 = attempts.filter((a) => a.status === 503).length;
    const duringFault = attempts.filter((a) => a.startedAt >= fault.from && a.startedAt <= fault.to);
    const oversold = Math.max(0, ledger.confirmedUnits - ledger.capacity, -(finalLine?.remaining ?? 0));
    const facts: Facts = { outcomes, attempts, fault, ledger, answers };
    const own = scenario.assess?.(run, facts) ?? {};
    const invariants = {
      no_oversell: oversold === 0,
      no_lost_acknowledged: ledger.lostAcknowledged.length === 0,
      no_duplicates: ledger.duplicates === 0,
      no_5xx_but_503: http5xx === http503,
      rejected_within_lost_reservations: ledger.rejectedAcknowledged <= lostInRedis,
      [`every_acknowledged_${kind.noun}_found`]: answers.found === sale.acknowledged.size,
      every_buyer_answered: outcomes.every((o) => isFinal(kind, o.final)),
      ...own.invariants,
    };
    return {
      scenario: scenario.name,
      acknowledged: sale.acknowledged.size,
      confirmed_rows: ledger.confirmedRows,
      oversold,
      lost_acknowledged: ledger.lostAcknowledged.length,
      duplicates: ledger.duplicates,
      rejected_acknowledged: ledger.rejectedAcknowledged,
      http_5xx: http5xx,
      http_503: http503,
      recovered_s: round(((recoveredAt ?? Date.now()) - fault.to) / 1000),
      invariants,
      lost_reservations_in_redis: lostInRedis,
      kind: kind.name,
      scale: options.scale,
      buyers: scale.buyers,
      units: scale.units,
      functions_run_as: options.bundles ? 'bundles' : 'sources',
      requests: attempts.length,
      statuses: tally(attempts),
      final_answers: tally(outcomes.map((o) => ({ status: o.final }))),
      // The answers that acknowledged: a coupon's 409 ALREADY_ISSUED names one an earlier attempt was issued.
      acknowledged_by: tally(outcomes.filter((o) => o.reservationId).map((o) => ({ status: o.final }))),
      fault_s: round((fault.to - fault.from) / 1000),
      during_fault: {
        requests: duringFault.length,
        statuses: tally(duringFault),
        p99_503_ms: Math.round(
          percentile(
            duringFault.filter((a) => a.status === 503).map((a) => a.ms),
            99,
          ),
        ),
        max_ms: Math.round(Math.max(0, ...duringFault.map((a) => a.ms))),
      },
      [`${kind.noun}_answers`]: answers.statuses,
      recovered: recoveredAt !== undefined,
      reconcile_runs: reconciles + 1,
      redis_remaining: finalLine?.remaining,
      ...(ledger.lostAcknowledged.length ? { lost_acknowledged_sample: ledger.lostAcknowledged.slice(0, 3) } : {}),
      ...(existsSync(faultLog) ? { fault_point_firings: readFileSync(faultLog, 'utf8').split('\n').filter(Boolean).length } : {}),
      ...own.extra,
    };
  } finally {
    await db?.end().catch(() => undefined);
    await twin?.stop();
    await redis.stop();
  }
}
