/**
 * Time-deal coupons, following the orders bench's two parts.
 *
 * End to end: 900 distinct signed-in users (then 5,000) ask once each for a deal's coupons over
 * HTTP; after the writer drains, issued = limit, no user holds two, rows = issued. Each MySQL
 * baseline (BASELINES) runs the same crowd against a fresh deal and is held to the same.
 *
 * Contended resource: the issuing script alone against each baseline's statements, many connections.
 */
import { randomBytes } from 'node:crypto';
import { createPool, type RowDataPacket } from 'mysql2/promise';
import type { Scenario } from '../support/scenario';
import { adminCookie, adminPut, handOffShape, inParallel, pointAtTwin, race, releaseSharedClients, signedInCrowd, timed } from '../support/crowd';
import { type LoadResult } from '../support/measure';
import { round } from '../support/round';
import { fleetOf, oneDecrFloor, redisCpuPerCall, redisCpuPerCallOnFleet, type Fleet } from '../support/redis-floor';
import { busyCores, contendedBusy, type Busy } from '../support/contended-busy';
import { shardsOf } from '../support/redis-shards';
import { startCpuMeter } from '../support/cpu';
import { perRequest, snapshotInvocations, type LambdaPerRequest } from '../support/invocations';
import { issueCoupon, issuedCount } from '../../shared/coupons/coupons';
import { until } from '../../shared/platform/wait';
import { LOCAL_SOURCE } from '../../infra/twin/load-test-sources';
import { issueCouponForUpdate } from '../baselines/coupons-for-update';
import { issueCouponConditionalAutocommit, issueCouponConditionalTransaction } from '../baselines/coupons-conditional';

const RUNS = [
  { users: 900, limit: 500 },
  { users: 5_000, limit: 3_000 },
];
/** Each design's unmeasured first crowd: the first measured run's shape. */
const WARM_UP = RUNS[0]!;
const CONTENDED_COUPONS = 10_000;
const CONTENDED_CONCURRENCY = 50;
/** Calls over the fleet's connections before its measured run: each connection made and the script met once. */
const CONTENDED_WARM_UP = 1_000;
/** The keys coupon-issue-5.lua takes. */
const ISSUING_SCRIPT_KEYS = 5;
const HOUR = 3_600_000;

/** The MySQL designs Surge is measured against; `counter` when the design keeps deals.issued. */
const BASELINES = {
  for_update: { label: 'FOR UPDATE', path: (dealId: string) => `/__baseline/deals/${dealId}/coupons`, issue: issueCouponForUpdate, counter: false },
  conditional_transaction: {
    label: 'conditional UPDATE + INSERT, one transaction',
    path: (dealId: string) => `/__baseline/conditional-transaction/deals/${dealId}/coupons`,
    issue: issueCouponConditionalTransaction,
    counter: true,
  },
  conditional_autocommit: {
    label: 'conditional UPDATE + INSERT, autocommit',
    path: (dealId: string) => `/__baseline/conditional-autocommit/deals/${dealId}/coupons`,
    issue: issueCouponConditionalAutocommit,
    counter: true,
  },
} as const;
type BaselineName = keyof typeof BASELINES;
const baselineNames = Object.keys(BASELINES) as BaselineName[];

export const coupons: Scenario = async ({ twin, connections, log }) => {
  // On a cluster (SURGE_REDIS_CLUSTER=true) the functions' client, which the one-DECR floor uses too, must know it.
  const redisNodes = await shardsOf(twin.redisUrl);
  pointAtTwin(twin, { DATABASE_POOL_SIZE: String(CONTENDED_CONCURRENCY), ...(redisNodes.cluster ? { REDIS_CLUSTER: 'true' } : {}) });
  const tag = randomBytes(3).toString('hex');
  const db = createPool({ uri: twin.databaseUrl, connectionLimit: CONTENDED_CONCURRENCY });
  const admin = await adminCookie(twin);
  const openDeal = async (dealId: string, limit: number) => {
    const window = { opensAt: new Date(Date.now() - HOUR).toISOString(), closesAt: new Date(Date.now() + HOUR).toISOString() };
    await adminPut(twin, admin, `/deals/${dealId}`, { title: `Bench ${dealId}`, ...window, limit });
    return dealId;
  };
  const dealFacts = async (dealId: string) => {
    const [[rows], [deal]] = await Promise.all([
      db.query<RowDataPacket[]>('SELECT COUNT(*) AS n, COUNT(DISTINCT user_id) AS holders FROM coupons WHERE deal_id = ?', [dealId]),
      db.query<RowDataPacket[]>('SELECT issued FROM deals WHERE id = ?', [dealId]),
    ]);
    return { rows: Number(rows[0]!.n), holders: Number(rows[0]!.holders), issuedColumn: Number(deal[0]!.issued) };
  };
  const leftInRedis = (dealId: string, limit: number) => async () => limit - ((await issuedCount(dealId)) ?? 0);
  const leftInMysql = (dealId: string, limit: number) => async () => limit - (await dealFacts(dealId)).rows;

  // Every design serves a first crowd unmeasured, as warm Lambda instances would: a run of 900
  // requests lasts about a second, too short to also carry the JIT's first compilations. Each is
  // warmed as the first measured run will load it (WARM_UP): after 200 requests, Surge's longer path
  // (the script, the hand-off, the writer's batches) was still compiling, its 900-user rate rising run
  // after run on one twin (612, 1,308, 1,672 a second) where autocommit's did not (934, 1,102, 1,065).
  log('warming every design');
  const warmup = await signedInCrowd(twin, WARM_UP.users);
  await race(
    twin,
    { path: `/deals/${await openDeal(`warm-${tag}`, WARM_UP.limit)}/coupons`, cookies: warmup.cookies, connections, idField: 'couponId' },
    'warm-up',
    log,
  );
  for (const name of baselineNames) {
    await race(
      twin,
      {
        path: BASELINES[name].path(await openDeal(`warm-${name.replace('_', '-')}-${tag}`, WARM_UP.limit)),
        cookies: warmup.cookies,
        connections,
        idField: 'couponId',
      },
      'warm-up',
      log,
    );
  }

  const runs: Record<string, unknown>[] = [];
  const invariants: Record<string, { expected: unknown; actual: unknown }> = {};
  let headline: LoadResult | undefined;
  /** Lambda's figures per coupon from the headline (first) run of each design. */
  const lambda: Record<string, Record<string, LambdaPerRequest>> = {};
  let headlineBaselines: Record<BaselineName, LoadResult> | undefined;
  for (const { users, limit } of RUNS) {
    log(`${users} users for ${limit} coupons`);
    const { cookies } = await signedInCrowd(twin, users);
    const surgeDeal = await openDeal(`deal-${tag}-${users}`, limit);
    const surgeInvocations = await snapshotInvocations(twin);
    const surgeCpu = startCpuMeter(twin.pids, 'surge');
    const { result, ...handOff } = await handOffShape(
      twin,
      (r) => r.surge.ids.length,
      async () => {
        const surge = await race(
          twin,
          { path: `/deals/${surgeDeal}/coupons`, cookies, connections, idField: 'couponId', remaining: leftInRedis(surgeDeal, limit) },
          `Surge: ${users} users`,
          log,
        );
        const drained = await timed(() =>
          until(async () => (await dealFacts(surgeDeal)).rows >= surge.ids.length, 60_000, 'the coupons stored', 50, { atDeadline: 'give up' }),
        );
        return { surge, drained };
      },
    );
    const { surge, drained } = result;
    // Per coupon issued, the writer's storing included.
    surgeCpu.perRequest(surge.ids.length || 1);
    lambda.surge ??= perRequest(surgeInvocations, await snapshotInvocations(twin), surge.ids.length || 1);
    const facts = await dealFacts(surgeDeal);

    const baselines = {} as Record<BaselineName, { race: Awaited<ReturnType<typeof race>>; facts: Awaited<ReturnType<typeof dealFacts>> }>;
    for (const name of baselineNames) {
      const dealId = await openDeal(`${name.replace('_', '-')}-${tag}-${users}`, limit);
      const invocationsBefore = await snapshotInvocations(twin);
      const cpu = startCpuMeter(twin.pids, name);
      const run = await race(
        twin,
        { path: BASELINES[name].path(dealId), cookies, connections, idField: 'couponId', remaining: leftInMysql(dealId, limit) },
        `baseline ${BASELINES[name].label}: ${users} users`,
        log,
      );
      cpu.perRequest(run.ids.length || 1);
      lambda[name] ??= perRequest(invocationsBefore, await snapshotInvocations(twin), run.ids.length || 1);
      baselines[name] = { race: run, facts: await dealFacts(dealId) };
    }
    const baseline = baselines.for_update.race;

    runs.push({
      users,
      limit,
      surge: { ...surge.load, statuses: surge.statuses, drain_s: round(drained.seconds, 2), ...handOff },
      baseline: { ...baseline.load, statuses: baseline.statuses },
      ratio_to_baseline: round(surge.load.rps / baseline.load.rps, 2),
      baselines: Object.fromEntries(
        baselineNames.map((name) => [
          name,
          {
            ...baselines[name].race.load,
            design: BASELINES[name].label,
            statuses: baselines[name].race.statuses,
            ratio: round(surge.load.rps / baselines[name].race.load.rps, 2),
          },
        ]),
      ),
    });
    invariants[`issued_${users}`] = { expected: limit, actual: surge.ids.length };
    invariants[`sold_out_${users}`] = { expected: users - limit, actual: surge.statuses[409] ?? 0 };
    invariants[`rows_after_drain_${users}`] = { expected: surge.ids.length, actual: facts.rows };
    invariants[`duplicates_${users}`] = { expected: 0, actual: facts.rows - facts.holders };
    for (const name of baselineNames) {
      const { race: run, facts: held } = baselines[name];
      invariants[`${name}_issued_${users}`] = { expected: limit, actual: held.rows };
      invariants[`${name}_rows_match_accepted_${users}`] = { expected: run.ids.length, actual: held.rows };
      invariants[`${name}_duplicates_${users}`] = { expected: 0, actual: held.rows - held.holders };
      if (BASELINES[name].counter) invariants[`${name}_counter_matches_rows_${users}`] = { expected: held.rows, actual: held.issuedColumn };
    }
    headline ??= surge.load;
    headlineBaselines ??= Object.fromEntries(baselineNames.map((name) => [name, baselines[name].race.load])) as Record<BaselineName, LoadResult>;
  }

  const luaDeal = await openDeal(`lua-${tag}`, CONTENDED_COUPONS);
  const luaLabel = `contended: issuing script, ${CONTENDED_CONCURRENCY} in flight`;
  log(luaLabel);
  /** The Redis floor per issue (support/redis-floor.ts): the one-DECR script with the issuing script's number of keys. */
  const decrFloor = (label: string, fleet?: Fleet) =>
    oneDecrFloor(redisNodes.shards, `{deal:floor-${tag}-${label}}`, ISSUING_SCRIPT_KEYS, CONTENDED_COUPONS, CONTENDED_CONCURRENCY, fleet);
  const decrFloorBefore = await decrFloor('1');
  const lua = await busyCores(twin.pids, redisNodes.shards, () =>
    redisCpuPerCall(redisNodes.shards, CONTENDED_COUPONS, CONTENDED_CONCURRENCY, (i) => issueCoupon(luaDeal, i + 1, LOCAL_SOURCE), luaLabel),
  );
  const decrFloorAfter = await decrFloor('2');
  invariants.one_decr_floor_failures = { expected: [0, 0], actual: [decrFloorBefore.failures, decrFloorAfter.failures] };
  // One connection per instance, as the orders bench measures it (support/redis-floor.ts): each of
  // the fleet's connections carries one call at a time, as a Lambda instance serving one request.
  const fleet = await fleetOf(CONTENDED_CONCURRENCY);
  const fleetLabel = 'contended: issuing script';
  const [fleetFloorBefore, fleetLua, fleetFloorAfter] = await (async () => {
    try {
      const warmDeal = await openDeal(`lua-fleet-warm-${tag}`, CONTENDED_WARM_UP);
      await redisCpuPerCallOnFleet(
        redisNodes.shards,
        fleet,
        CONTENDED_WARM_UP,
        (c, i) => issueCoupon(warmDeal, i + 1, LOCAL_SOURCE, Date.now(), c),
        `${fleetLabel}, warm-up`,
      );
      const fleetDeal = await openDeal(`lua-fleet-${tag}`, CONTENDED_COUPONS);
      const floorBefore = await decrFloor('fleet-1', fleet);
      const script = await busyCores(twin.pids, redisNodes.shards, () =>
        redisCpuPerCallOnFleet(redisNodes.shards, fleet, CONTENDED_COUPONS, (c, i) => issueCoupon(fleetDeal, i + 1, LOCAL_SOURCE, Date.now(), c), fleetLabel),
      );
      const floorAfter = await decrFloor('fleet-2', fleet);
      return [floorBefore, script, floorAfter] as const;
    } finally {
      await fleet.close();
    }
  })();
  invariants.one_connection_per_instance_failures = {
    expected: [0, 0, 0],
    actual: [fleetFloorBefore.failures, fleetLua.value.failures, fleetFloorAfter.failures],
  };
  const floorOf = (scriptMs: number, floors: { redis_ms_per_call: number }[]) => {
    const oneDecrMs = round(floors.reduce((sum, f) => sum + f.redis_ms_per_call, 0) / floors.length, 4);
    return { issuing_script_redis_ms: scriptMs, one_decr_script_redis_ms: oneDecrMs, ratio: round(scriptMs / oneDecrMs, 2) };
  };
  const redisFloor = {
    ...floorOf(lua.value.redis_ms_per_call, [decrFloorBefore, decrFloorAfter]),
    method: `Redis CPU per call, ${CONTENDED_CONCURRENCY} in flight on the functions' client in the bench's process: the issuing script (its contended run) against EVALSHA of one DECR with its ${ISSUING_SCRIPT_KEYS} keys in one slot, before and after`,
    one_connection_per_instance: {
      ...floorOf(fleetLua.value.redis_ms_per_call, [fleetFloorBefore, fleetFloorAfter]),
      method: `The same, from ${CONTENDED_CONCURRENCY} connections with one call on each at a time, as a fleet of instances each serving one request calls`,
    },
  };
  const luaRate = round(CONTENDED_COUPONS / lua.seconds);
  const fleetRate = round(CONTENDED_COUPONS / fleetLua.seconds);
  const contended = {} as Record<BaselineName, { rate: number; failures: number; seconds: number; busy: Busy }>;
  for (const name of baselineNames) {
    const dealId = await openDeal(`mysql-${name.replace('_', '-')}-${tag}`, CONTENDED_COUPONS);
    const label = `contended: ${BASELINES[name].label}, ${CONTENDED_CONCURRENCY} connections`;
    log(label);
    const run = await busyCores(twin.pids, redisNodes.shards, () =>
      inParallel(CONTENDED_COUPONS, CONTENDED_CONCURRENCY, (i) => BASELINES[name].issue(db, dealId, i + 1), label),
    );
    contended[name] = { rate: round(CONTENDED_COUPONS / run.seconds), failures: run.value, seconds: run.seconds, busy: run.busy };
    const held = await dealFacts(dealId);
    invariants[`${name}_contended_rows`] = { expected: CONTENDED_COUPONS - run.value, actual: held.rows };
    if (BASELINES[name].counter) invariants[`${name}_contended_counter_matches_rows`] = { expected: held.rows, actual: held.issuedColumn };
  }
  const lockedRate = contended.for_update.rate;
  log(`contended: script ${luaRate}/s, ${baselineNames.map((name) => `${BASELINES[name].label} ${contended[name].rate}/s`).join(', ')}`);
  redisNodes.close();
  // As the orders bench's (support/contended-busy.ts): the cores each run kept busy, and the script's limit at one busy Redis core.
  const busy = contendedBusy([{ ...lua, calls: CONTENDED_COUPONS }], baselineNames, (name) => ({
    ratePerSecond: contended[name].rate,
    runs: [contended[name]],
  }));
  const fleetBusy = contendedBusy([{ ...fleetLua, calls: CONTENDED_COUPONS }], baselineNames, (name) => ({
    ratePerSecond: contended[name].rate,
    runs: [contended[name]],
  }));

  await db.end();
  await releaseSharedClients();
  return {
    load: headline!,
    designs: {
      surge: { label: 'Surge (Redis script, SQS, writer)', load: headline!, lambda_per_request: lambda.surge },
      ...Object.fromEntries(
        baselineNames.map((name) => [name, { label: BASELINES[name].label, load: headlineBaselines![name], lambda_per_request: lambda[name] }]),
      ),
    },
    baseline: { ...headlineBaselines!.for_update },
    extra: {
      redis_floor_per_issue: redisFloor,
      baselines: Object.fromEntries(
        baselineNames.map((name) => [
          name,
          { ...headlineBaselines![name], design: BASELINES[name].label, ratio: round(headline!.rps / headlineBaselines![name].rps, 2) },
        ]),
      ),
      ratio_to_baselines: Object.fromEntries(baselineNames.map((name) => [name, round(headline!.rps / headlineBaselines![name].rps, 2)])),
      ratio_to_baseline: round(headline!.rps / headlineBaselines!.for_update.rps, 2),
      min_ratio_to_baseline: Math.min(...runs.map((r) => r.ratio_to_baseline as number)),
      runs,
      contended: {
        script_per_s: luaRate,
        for_update_per_s: lockedRate,
        ratio: round(luaRate / lockedRate, 1),
        baselines_per_s: Object.fromEntries(baselineNames.map((name) => [name, contended[name].rate])),
        ratios: Object.fromEntries(baselineNames.map((name) => [name, round(luaRate / contended[name].rate, 1)])),
        busy,
        one_connection_per_instance: {
          script_per_s: fleetRate,
          ratios: Object.fromEntries(baselineNames.map((name) => [name, round(fleetRate / contended[name].rate, 1)])),
          script_limit_per_s: fleetBusy.script_limit_per_s,
          ratios_at_script_limit: fleetBusy.ratios_at_script_limit,
          busy_cores: fleetBusy.busy_cores.script,
          method: `The issuing script from ${CONTENDED_CONCURRENCY} connections with one call on each at a time, as ${CONTENDED_CONCURRENCY} instances would call; each MySQL design as above, from as many connections`,
        },
        script_failures: lua.value.failures,
        baseline_failures: Object.fromEntries(baselineNames.map((name) => [name, contended[name].failures])),
      },
    },
    invariants,
  };
};
