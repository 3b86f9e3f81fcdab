/**
 * Flash-sale orders, two parts in one run.
 *
 * End to end: the reference run — BUYERS distinct signed-in buyers, as many units, quantity 1, over
 * HTTP as fast as the machine allows — then the writer drains the queue and the invariants are
 * checked. Each MySQL baseline (BASELINES) runs the same way on a fresh item, and its own
 * invariants are checked. Every design first serves one such crowd unmeasured (its warm-up); then
 * Surge and the baselines run A B… B A and are averaged, so none gains from the machine's drift.
 *
 * Contended resource: the limit left once Lambda scales the fleet out — the reservation script
 * alone against each baseline's statements, each from many concurrent connections.
 */
import { randomBytes } from 'node:crypto';
import { createPool, type RowDataPacket } from 'mysql2/promise';
import type { Scenario } from '../support/scenario';
import {
  adminCookie,
  adminPut,
  emulatorCalls,
  handOffShape,
  inParallel,
  orderRequest,
  pointAtTwin,
  race,
  releaseSharedClients,
  signedInCrowd,
  timed,
} from '../support/crowd';
import { startCpuMeter } from '../support/cpu';
import { meanLoad } from '../support/measure';
import { round } from '../support/round';
import { infoSum, shardsOf } from '../support/redis-shards';
import { fleetOf, oneDecrFloor, redisCpuPerCall, redisCpuPerCallOnFleet, type Fleet } from '../support/redis-floor';
import { busyCores, contendedBusy } from '../support/contended-busy';
import { metricsCost } from '../support/metrics-cost';
import { handOffCpuPerReservation } from '../support/hand-off-cost';
import { perRequest, snapshotInvocations } from '../support/invocations';
import { itemKeys, MAX_ORDER_QUANTITY } from '../../shared/sale/orders/model';
import { reserve } from '../../shared/sale/orders/sale';
import { until } from '../../shared/platform/wait';
import { LOCAL_SOURCE } from '../../infra/twin/load-test-sources';
import { placeOrderForUpdate } from '../baselines/orders-for-update';
import { placeOrderConditionalAutocommit, placeOrderConditionalTransaction } from '../baselines/orders-conditional';

const BUYERS = Number(process.env.BENCH_BUYERS ?? 10_000);
/** The script runs ~20× faster than the lock: more units give it a window long enough to measure. */
const CONTENDED_SCRIPT_UNITS = 50_000;
const CONTENDED_LOCKED_UNITS = 10_000;
const CONTENDED_CONCURRENCY = 50;
const CONTENDED_WARM_UP = 1_000;
/** The keys order-reserve-8.lua takes. */
const RESERVATION_SCRIPT_KEYS = 8;

/** The MySQL designs Surge is measured against: the original service's, and the strongest ones. */
const BASELINES = {
  for_update: { label: 'FOR UPDATE', path: (itemId: string) => `/__baseline/items/${itemId}/orders`, place: placeOrderForUpdate },
  conditional_transaction: {
    label: 'conditional UPDATE + INSERT, one transaction',
    path: (itemId: string) => `/__baseline/conditional-transaction/items/${itemId}/orders`,
    place: placeOrderConditionalTransaction,
  },
  conditional_autocommit: {
    label: 'conditional UPDATE + INSERT, autocommit',
    path: (itemId: string) => `/__baseline/conditional-autocommit/items/${itemId}/orders`,
    place: placeOrderConditionalAutocommit,
  },
} as const;
type BaselineName = keyof typeof BASELINES;
const baselineNames = Object.keys(BASELINES) as BaselineName[];

export const orders: Scenario = async ({ twin, runtime, connections, duration, log }) => {
  // On a cluster (SURGE_REDIS_CLUSTER=true) every master's counters are summed.
  const redisNodes = await shardsOf(twin.redisUrl);
  pointAtTwin(twin, { DATABASE_POOL_SIZE: String(CONTENDED_CONCURRENCY), ...(redisNodes.cluster ? { REDIS_CLUSTER: 'true' } : {}) });
  const tag = randomBytes(3).toString('hex');
  const db = createPool({ uri: twin.databaseUrl, connectionLimit: CONTENDED_CONCURRENCY });
  const redis = redisNodes.client;
  const admin = await adminCookie(twin);
  const openItem = async (itemId: string, quantity: number) => {
    await adminPut(twin, admin, `/items/${itemId}/stock`, { quantity, perUserLimit: 1 });
    return itemId;
  };

  log(`creating ${BUYERS} signed-in buyers`);
  const { cookies } = await signedInCrowd(twin, BUYERS);
  const buyAll = (path: string, label: string, remaining: () => Promise<number>) =>
    race(twin, { path, cookies, connections, body: '{"quantity":1}', idempotencyPrefix: `bench-${tag}`, idField: 'orderId', remaining }, label, log);

  async function itemFacts(itemId: string) {
    const [[rows], [item]] = await Promise.all([
      db.query<RowDataPacket[]>(
        "SELECT COUNT(*) AS n, COUNT(DISTINCT user_id) AS buyers FROM orders WHERE item_id = ? AND status IN ('confirmed', 'rejected')",
        [itemId],
      ),
      db.query<RowDataPacket[]>('SELECT initial_stock, sold FROM items WHERE id = ?', [itemId]),
    ]);
    return { rows: Number(rows[0]!.n), buyers: Number(rows[0]!.buyers), initial: Number(item[0]!.initial_stock), sold: Number(item[0]!.sold) };
  }
  const unsoldInMysql = (itemId: string) => async () => {
    const [rows] = await db.query<RowDataPacket[]>('SELECT initial_stock - sold AS left_ FROM items WHERE id = ?', [itemId]);
    return Number(rows[0]!.left_);
  };

  async function missingRows(orderIds: string[]): Promise<number> {
    let found = 0;
    for (let i = 0; i < orderIds.length; i += 1000) {
      const [rows] = await db.query<RowDataPacket[]>("SELECT COUNT(*) AS n FROM orders WHERE id IN (?) AND status IN ('confirmed', 'rejected')", [
        orderIds.slice(i, i + 1000),
      ]);
      found += Number(rows[0]!.n);
    }
    return orderIds.length - found;
  }

  const commandStats = async () => {
    const calls = (name: string) => infoSum(redisNodes.shards, 'commandstats', new RegExp(`cmdstat_${name}:calls=(\\d+)`));
    return { evalsha: (await calls('evalsha')) + (await calls('eval')), total: await infoSum(redisNodes.shards, 'stats', /total_commands_processed:(\d+)/) };
  };

  /** One end-to-end run through Surge on a fresh item: the race, the drain, then the invariants. */
  async function surgeRun(label: string) {
    const itemId = await openItem(`flash-${tag}-${label}`, BUYERS);
    const [redisBefore, sqsBefore] = await Promise.all([commandStats(), emulatorCalls(twin)]);
    const invocationsBefore = await snapshotInvocations(twin);
    const cpu = startCpuMeter(twin.pids, 'surge');
    const { result, ...handOff } = await handOffShape(
      twin,
      (r) => r.race.ids.length,
      async () => {
        const race = await buyAll(`/items/${itemId}/orders`, `Surge ${label}: POST /items/{id}/orders`, async () =>
          Number(await redis.hget(`{item:${itemId}}:sale`, 'stock')),
        );
        const drained = await timed(() =>
          until(async () => (await itemFacts(itemId)).rows >= race.ids.length, 120_000, 'the orders stored', 50, { atDeadline: 'give up' }),
        );
        return { race, drained };
      },
    );
    const { race, drained } = result;
    const accepted = race.ids.length;
    const cpuPerOrder = cpu.perRequest(accepted || 1);
    const lambda = perRequest(invocationsBefore, await snapshotInvocations(twin), accepted || 1);
    const [redisAfter, sqsAfter] = await Promise.all([commandStats(), emulatorCalls(twin)]);
    const sqsPerOrder = Object.fromEntries(
      Object.entries(sqsAfter)
        .filter(([name]) => !name.startsWith('S3') && (sqsBefore[name] ?? 0) < sqsAfter[name]!)
        .map(([name, n]) => [name, round((n - (sqsBefore[name] ?? 0)) / (accepted || 1), 4)]),
    );
    return {
      race,
      accepted,
      drainSeconds: drained.seconds,
      handOff,
      cpuPerOrder,
      lambda,
      sqsPerOrder,
      redisPerOrder: {
        evalsha: round((redisAfter.evalsha - redisBefore.evalsha) / (accepted || 1), 3),
        commands_incl_script_internals: round((redisAfter.total - redisBefore.total) / (accepted || 1), 3),
      },
      facts: await itemFacts(itemId),
      finalStock: Number(await redis.hget(`{item:${itemId}}:sale`, 'stock')),
      lost: await missingRows(race.ids),
    };
  }

  async function baselineRun(name: BaselineName, label: string) {
    const itemId = await openItem(`${name.replace('_', '-')}-${tag}-${label}`, BUYERS);
    const invocationsBefore = await snapshotInvocations(twin);
    const cpu = startCpuMeter(twin.pids, name);
    const race = await buyAll(BASELINES[name].path(itemId), `baseline ${label}: ${BASELINES[name].label}`, unsoldInMysql(itemId));
    // Per accepted order, as Surge's.
    cpu.perRequest(race.ids.length || 1);
    const lambda = perRequest(invocationsBefore, await snapshotInvocations(twin), race.ids.length || 1);
    return { race, lambda, facts: await itemFacts(itemId) };
  }

  // Every design first serves a crowd of the measured shape unmeasured, as warm Lambda instances
  // would (the coupons bench does the same). Without it Surge, run first on a fresh twin, paid its
  // first compilations and the writer's first batches inside its first run: one bench's two runs
  // went 1,776 and 3,675 orders a second, autocommit's 1,423 and 2,201. Surge's warm-up is drained,
  // so no write of it falls into a measured window.
  log('warming every design');
  const warmItem = await openItem(`warm-${tag}`, BUYERS);
  const warmed = await buyAll(`/items/${warmItem}/orders`, 'warm-up: Surge', async () => Number(await redis.hget(`{item:${warmItem}}:sale`, 'stock')));
  await until(async () => (await itemFacts(warmItem)).rows >= warmed.ids.length, 120_000, 'the warm-up orders stored', 50);
  for (const name of baselineNames) {
    const itemId = await openItem(`warm-${name.replace('_', '-')}-${tag}`, BUYERS);
    await buyAll(BASELINES[name].path(itemId), `warm-up: ${BASELINES[name].label}`, unsoldInMysql(itemId));
  }

  // End to end, A B C D D C B A, so that a drift of the machine over the run weighs on each alike.
  const surgeRuns = [await surgeRun('1')];
  const baselineRuns = Object.fromEntries(baselineNames.map((name) => [name, [] as Awaited<ReturnType<typeof baselineRun>>[]])) as Record<
    BaselineName,
    Awaited<ReturnType<typeof baselineRun>>[]
  >;
  for (const name of baselineNames) baselineRuns[name].push(await baselineRun(name, '1'));
  for (const name of [...baselineNames].reverse()) baselineRuns[name].push(await baselineRun(name, '2'));
  surgeRuns.push(await surgeRun('2'));
  const surgeLoad = meanLoad(surgeRuns.map((r) => r.race.load));
  const baselineLoads = Object.fromEntries(baselineNames.map((name) => [name, meanLoad(baselineRuns[name].map((r) => r.race.load))])) as Record<
    BaselineName,
    ReturnType<typeof meanLoad>
  >;

  // The contended resource alone, A B B A as well.
  /** The reservation script's contended rate: through the functions' client, or, given a fleet, one call on each of its connections. */
  async function scriptRate(label: string, units = CONTENDED_SCRIPT_UNITS, fleet?: Fleet) {
    const itemId = await openItem(`lua-${tag}-${label}`, units);
    const what = `contended ${label}: reservation script`;
    log(fleet ? `${what}, ${fleet.connections.length} connections, one call on each` : `${what}, ${CONTENDED_CONCURRENCY} in flight`);
    const request = (i: number) => ({ itemId, userId: i + 1, quantity: 1, idempotencyKey: `c${i}`, source: LOCAL_SOURCE });
    const run = await busyCores(twin.pids, redisNodes.shards, () =>
      fleet
        ? redisCpuPerCallOnFleet(redisNodes.shards, fleet, units, (connection, i) => reserve(request(i), Date.now(), connection), what)
        : redisCpuPerCall(redisNodes.shards, units, CONTENDED_CONCURRENCY, (i) => reserve(request(i)), `${what}, ${CONTENDED_CONCURRENCY} in flight`),
    );
    return {
      rate: round(units / run.seconds),
      calls: units,
      failures: run.value.failures,
      redisMs: run.value.redis_ms_per_call,
      seconds: run.seconds,
      busy: run.busy,
    };
  }
  /** The Redis floor per reservation (support/redis-floor.ts): the one-DECR script with the reservation script's number of keys. */
  const decrFloor = (label: string, fleet?: Fleet) =>
    oneDecrFloor(redisNodes.shards, itemKeys(`floor-${tag}-${label}`).tag, RESERVATION_SCRIPT_KEYS, CONTENDED_SCRIPT_UNITS, CONTENDED_CONCURRENCY, fleet);
  async function mysqlRate(name: BaselineName, label: string, units = CONTENDED_LOCKED_UNITS) {
    const itemId = await openItem(`mysql-${name.replace('_', '-')}-${tag}-${label}`, units);
    const what = `contended ${label}: ${BASELINES[name].label}, ${CONTENDED_CONCURRENCY} connections`;
    log(what);
    const run = await busyCores(twin.pids, redisNodes.shards, () =>
      inParallel(units, CONTENDED_CONCURRENCY, (i) => BASELINES[name].place(db, itemId, i + 1, 1), what),
    );
    return { rate: round(units / run.seconds), failures: run.value, units, seconds: run.seconds, busy: run.busy, facts: await itemFacts(itemId) };
  }
  // Every side's clients and code paths warmed up in this process before anything is timed.
  await scriptRate('warm-up', CONTENDED_WARM_UP);
  for (const name of baselineNames) await mysqlRate(name, 'warm-up', CONTENDED_WARM_UP);
  const decrFloorRuns = [await decrFloor('1')];
  const scriptRuns = [await scriptRate('1')];
  const mysqlRuns = Object.fromEntries(baselineNames.map((name) => [name, [] as Awaited<ReturnType<typeof mysqlRate>>[]])) as Record<
    BaselineName,
    Awaited<ReturnType<typeof mysqlRate>>[]
  >;
  for (const name of baselineNames) mysqlRuns[name].push(await mysqlRate(name, '1'));
  for (const name of [...baselineNames].reverse()) mysqlRuns[name].push(await mysqlRate(name, '2'));
  scriptRuns.push(await scriptRate('2'));
  decrFloorRuns.push(await decrFloor('2'));
  // One connection per instance, as on Lambda: an instance serves one request at a time over a
  // connection of its own, so Redis reads and answers each call alone, where one shared connection
  // gathers a turn's calls into one write.
  const fleet = await fleetOf(CONTENDED_CONCURRENCY);
  const fleetFloorRuns: Awaited<ReturnType<typeof decrFloor>>[] = [];
  const fleetScriptRuns: Awaited<ReturnType<typeof scriptRate>>[] = [];
  try {
    await scriptRate('fleet-warm-up', CONTENDED_WARM_UP, fleet);
    fleetFloorRuns.push(await decrFloor('fleet-1', fleet));
    fleetScriptRuns.push(await scriptRate('fleet-1', CONTENDED_SCRIPT_UNITS, fleet));
    fleetScriptRuns.push(await scriptRate('fleet-2', CONTENDED_SCRIPT_UNITS, fleet));
    fleetFloorRuns.push(await decrFloor('fleet-2', fleet));
  } finally {
    await fleet.close();
  }
  const meanOf = (values: number[]) => round(values.reduce((sum, v) => sum + v, 0) / values.length, 4);
  const floorOf = (script: { redisMs: number }[], floor: { redis_ms_per_call: number }[]) => ({
    reservation_script_redis_ms: meanOf(script.map((r) => r.redisMs)),
    one_decr_script_redis_ms: meanOf(floor.map((r) => r.redis_ms_per_call)),
    ratio: round(meanOf(script.map((r) => r.redisMs)) / meanOf(floor.map((r) => r.redis_ms_per_call)), 2),
  });
  const redisFloor = {
    ...floorOf(scriptRuns, decrFloorRuns),
    method: `Redis CPU per call, ${CONTENDED_CONCURRENCY} in flight on the functions' client in the bench's process: the reservation script (its contended runs) against EVALSHA of one DECR with its ${RESERVATION_SCRIPT_KEYS} keys in one slot`,
    one_connection_per_instance: {
      ...floorOf(fleetScriptRuns, fleetFloorRuns),
      method: `The same, from ${CONTENDED_CONCURRENCY} connections with one call on each at a time, as a fleet of instances each serving one request calls`,
    },
  };
  const meanRate = (runs: { rate: number }[]) => round(runs.reduce((sum, r) => sum + r.rate, 0) / runs.length);
  const luaRate = meanRate(scriptRuns);
  const mysqlRates = Object.fromEntries(baselineNames.map((name) => [name, meanRate(mysqlRuns[name])])) as Record<BaselineName, number>;
  const forUpdateRate = mysqlRates.for_update;
  log(`contended: script ${luaRate}/s, ${baselineNames.map((name) => `${BASELINES[name].label} ${mysqlRates[name]}/s`).join(', ')} (means of two)`);
  // The script's runs share the machine with the bench's process that drives them: the cores each run kept
  // busy, and Redis's own limit, what one busy core of it takes (support/contended-busy.ts).
  const busy = contendedBusy(scriptRuns, baselineNames, (name) => ({
    ratePerSecond: mysqlRates[name],
    runs: mysqlRuns[name],
  }));
  log(
    `contended: Redis's limit for the script ${busy.script_limit_per_s}/s (busy cores while it ran: Redis ${busy.busy_cores.script.redis}, the bench ${busy.busy_cores.script.bench})`,
  );
  const fleetRate = meanRate(fleetScriptRuns);
  const fleetBusy = contendedBusy(fleetScriptRuns, baselineNames, (name) => ({ ratePerSecond: mysqlRates[name], runs: mysqlRuns[name] }));
  log(`contended, one connection per instance: script ${fleetRate}/s, Redis's limit for it ${fleetBusy.script_limit_per_s}/s`);

  // Orders accepted steadily, with metrics on and off: each turn on an item of its own, with the
  // highest per-buyer limit, so that a buyer meets neither it nor the per-item rate (10 a minute)
  // within a turn, and every answer is a 202 that counts once.
  const metricsOrders = { next: 0 };
  const metrics = await metricsCost(
    twin,
    runtime,
    duration,
    async (url, turn) => {
      const itemId = `metrics-${tag}-${turn}`;
      await adminPut(twin, admin, `/items/${itemId}/stock`, { quantity: 10_000_000, perUserLimit: MAX_ORDER_QUANTITY });
      return {
        url,
        connections,
        requests: [orderRequest(itemId, cookies, `metrics-${tag}`, metricsOrders)],
      };
    },
    log,
  );

  // The product CPU above is the twin's shared instance's, whose concurrent orders share a send; a deployed instance sends each alone.
  log('hand-off: one reservation per call against a shared turn');
  const handOffCost = await handOffCpuPerReservation();
  await db.end();
  redisNodes.close();
  await releaseSharedClients();
  const last = surgeRuns[surgeRuns.length - 1]!;
  const baselineReport = (name: BaselineName) => ({
    ...baselineLoads[name],
    design: BASELINES[name].label,
    ratio: round(surgeLoad.rps / baselineLoads[name].rps, 2),
    p99_ratio_to_surge: round(baselineLoads[name].p99_ms / Math.max(1, surgeLoad.p99_ms), 2),
    runs_rps: baselineRuns[name].map((r) => r.race.load.rps),
    statuses: baselineRuns[name].map((r) => r.race.statuses),
    rows: baselineRuns[name].map((r) => r.facts.rows),
    oversold: baselineRuns[name].map((r) => Math.max(0, r.facts.sold - r.facts.initial)),
  });
  /** Each baseline's runs, end to end and contended, hold what Surge's do: every accepted order one row, units sold = rows, none oversold. */
  const baselineInvariants = Object.fromEntries(
    baselineNames.flatMap((name) => {
      const runs = baselineRuns[name];
      const contended = mysqlRuns[name];
      return [
        [`${name}_rows_match_accepted`, { expected: runs.map((r) => r.race.ids.length), actual: runs.map((r) => r.facts.rows) }],
        [`${name}_units_sold_match_rows`, { expected: runs.map((r) => r.facts.rows), actual: runs.map((r) => r.facts.sold) }],
        [`${name}_oversold`, { expected: runs.map(() => 0), actual: runs.map((r) => Math.max(0, r.facts.sold - r.facts.initial)) }],
        [`${name}_contended_rows`, { expected: contended.map((r) => r.units - r.failures), actual: contended.map((r) => r.facts.rows) }],
        [`${name}_contended_units_sold_match_rows`, { expected: contended.map((r) => r.facts.rows), actual: contended.map((r) => r.facts.sold) }],
      ];
    }),
  );
  return {
    load: surgeLoad,
    designs: {
      // Lambda's figures from each design's second (warm) run.
      surge: { label: 'Surge (Redis script, SQS, writer)', load: surgeLoad, lambda_per_request: last.lambda },
      ...Object.fromEntries(
        baselineNames.map((name) => [name, { label: BASELINES[name].label, load: baselineLoads[name], lambda_per_request: baselineRuns[name].at(-1)!.lambda }]),
      ),
    },
    baseline: baselineReport('for_update'),
    extra: {
      redis_floor_per_reservation: redisFloor,
      redis: redisNodes.shape,
      baselines: Object.fromEntries(baselineNames.map((name) => [name, baselineReport(name)])),
      ratio_to_baselines: Object.fromEntries(baselineNames.map((name) => [name, round(surgeLoad.rps / baselineLoads[name].rps, 2)])),
      runs: { surge_rps: surgeRuns.map((r) => r.race.load.rps), baseline_rps: baselineRuns.for_update.map((r) => r.race.load.rps) },
      statuses: surgeRuns.map((r) => r.race.statuses),
      buyers: BUYERS,
      ratio_to_baseline: round(surgeLoad.rps / baselineLoads.for_update.rps, 2),
      p99_ratio_baseline_to_surge: round(baselineLoads.for_update.p99_ms / Math.max(1, surgeLoad.p99_ms), 2),
      drain_s: round(Math.max(...surgeRuns.map((r) => r.drainSeconds)), 2),
      hand_off: surgeRuns.map((r) => r.handOff),
      // From the second (warm) run; the first also pays for warming the twin up.
      cpu_ms_per_order: last.cpuPerOrder,
      redis_calls_per_order: last.redisPerOrder,
      sqs_calls_per_order: last.sqsPerOrder,
      hand_off_cpu_per_order: handOffCost,
      metrics_cost: metrics,
      contended: {
        script_per_s: luaRate,
        for_update_per_s: forUpdateRate,
        ratio: round(luaRate / forUpdateRate, 1),
        baselines_per_s: mysqlRates,
        ratios: Object.fromEntries(baselineNames.map((name) => [name, round(luaRate / mysqlRates[name], 1)])),
        runs: {
          script_per_s: scriptRuns.map((r) => r.rate),
          ...Object.fromEntries(baselineNames.map((name) => [`${name}_per_s`, mysqlRuns[name].map((r) => r.rate)])),
        },
        busy,
        one_connection_per_instance: {
          script_per_s: fleetRate,
          ratios: Object.fromEntries(baselineNames.map((name) => [name, round(fleetRate / mysqlRates[name], 1)])),
          runs_per_s: fleetScriptRuns.map((r) => r.rate),
          script_limit_per_s: fleetBusy.script_limit_per_s,
          ratios_at_script_limit: fleetBusy.ratios_at_script_limit,
          busy_cores: fleetBusy.busy_cores.script,
          method: `The reservation script from ${CONTENDED_CONCURRENCY} connections with one call on each at a time, as ${CONTENDED_CONCURRENCY} instances would call; each MySQL design as above, from as many connections`,
        },
        script_failures: scriptRuns.map((r) => r.failures),
        baseline_failures: Object.fromEntries(baselineNames.map((name) => [name, mysqlRuns[name].map((r) => r.failures)])),
      },
    },
    // Every Surge run must hold each of these on its own.
    invariants: {
      one_decr_floor_failures: { expected: [0, 0], actual: decrFloorRuns.map((r) => r.failures) },
      one_connection_per_instance_failures: { expected: [0, 0, 0, 0], actual: [...fleetFloorRuns, ...fleetScriptRuns].map((r) => r.failures) },
      final_stock: { expected: [0, 0], actual: surgeRuns.map((r) => r.finalStock) },
      accepted: { expected: [BUYERS, BUYERS], actual: surgeRuns.map((r) => r.accepted) },
      rows: { expected: [BUYERS, BUYERS], actual: surgeRuns.map((r) => r.facts.rows) },
      duplicates: { expected: [0, 0], actual: surgeRuns.map((r) => r.facts.rows - r.facts.buyers) },
      oversold: { expected: [0, 0], actual: surgeRuns.map((r) => Math.max(0, r.facts.sold - r.facts.initial)) },
      lost: { expected: [0, 0], actual: surgeRuns.map((r) => r.lost) },
      ...baselineInvariants,
    },
  };
};
