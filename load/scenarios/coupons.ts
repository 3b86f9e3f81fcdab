/**
 * Time-deal coupons, following the orders bench's two parts.
 *
 * End to end: 900 distinct signed-in users (then 5,000) ask once each for a deal's coupons over
 * HTTP; after the writer drains, issued = limit, no user holds two, rows = issued. The FOR UPDATE
 * baseline runs the same crowd against a fresh deal.
 *
 * Contended resource: the issuing script alone against the locked transaction, many connections.
 */
import { randomBytes } from 'node:crypto';
import { createPool, type RowDataPacket } from 'mysql2/promise';
import type { Scenario } from '../bench';
import { adminCookie, adminPut, handOffShape, inParallel, pointAtTwin, race, releaseSharedClients, signedInCrowd, timed } from '../support/crowd';
import { round, type LoadResult } from '../support/measure';
import { issueCoupon } from '../../shared/coupons/coupons';
import { LOCAL_SOURCE } from '../../test/support/orders';
import { issueCouponForUpdate } from '../baselines/coupons-for-update';

const RUNS = [
  { users: 900, limit: 500 },
  { users: 5_000, limit: 3_000 },
];
const CONTENDED_COUPONS = 10_000;
const CONTENDED_CONCURRENCY = 50;
const HOUR = 3_600_000;

export const coupons: Scenario = async ({ twin, connections, log }) => {
  pointAtTwin(twin, { DATABASE_POOL_SIZE: String(CONTENDED_CONCURRENCY) });
  const tag = randomBytes(3).toString('hex');
  const db = createPool({ uri: twin.databaseUrl, connectionLimit: CONTENDED_CONCURRENCY });
  const admin = await adminCookie(twin);
  const openDeal = async (dealId: string, limit: number) => {
    const window = { opensAt: new Date(Date.now() - HOUR).toISOString(), closesAt: new Date(Date.now() + HOUR).toISOString() };
    await adminPut(twin, admin, `/deals/${dealId}`, { title: `Bench ${dealId}`, ...window, limit });
    return dealId;
  };
  const dealFacts = async (dealId: string) => {
    const [rows] = await db.query<RowDataPacket[]>('SELECT COUNT(*) AS n, COUNT(DISTINCT user_id) AS holders FROM coupons WHERE deal_id = ?', [dealId]);
    return { rows: Number(rows[0]!.n), holders: Number(rows[0]!.holders) };
  };

  // Both paths serve a first small crowd unmeasured, as warm Lambda instances would: a run of 900
  // requests lasts about a second, too short to also carry the JIT's first compilations.
  log('warming both paths');
  const warmup = await signedInCrowd(twin, 200);
  await race(twin, { path: `/deals/${await openDeal(`warm-${tag}`, 100)}/coupons`, cookies: warmup.cookies, connections, idField: 'couponId' }, 'warm-up', log);
  await race(twin, { path: `/__baseline/deals/${await openDeal(`warm-locked-${tag}`, 100)}/coupons`, cookies: warmup.cookies, connections, idField: 'couponId' }, 'warm-up', log);

  const runs: Record<string, unknown>[] = [];
  const invariants: Record<string, { expected: unknown; actual: unknown }> = {};
  let headline: LoadResult | undefined;
  let headlineBaseline: LoadResult | undefined;
  for (const { users, limit } of RUNS) {
    log(`${users} users for ${limit} coupons`);
    const { cookies } = await signedInCrowd(twin, users);
    const surgeDeal = await openDeal(`deal-${tag}-${users}`, limit);
    const { result, ...handOff } = await handOffShape(twin, (r) => r.surge.ids.length, async () => {
      const surge = await race(twin, { path: `/deals/${surgeDeal}/coupons`, cookies, connections, idField: 'couponId' }, `Surge: ${users} users`, log);
      const drained = await timed(async () => {
        const deadline = Date.now() + 60_000;
        while ((await dealFacts(surgeDeal)).rows < surge.ids.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      });
      return { surge, drained };
    });
    const { surge, drained } = result;
    const facts = await dealFacts(surgeDeal);

    const lockedDeal = await openDeal(`locked-${tag}-${users}`, limit);
    const baseline = await race(twin, { path: `/__baseline/deals/${lockedDeal}/coupons`, cookies, connections, idField: 'couponId' }, `baseline: ${users} users`, log);
    const baselineFacts = await dealFacts(lockedDeal);

    runs.push({
      users,
      limit,
      surge: { ...surge.load, statuses: surge.statuses, drain_s: round(drained.seconds, 2), ...handOff },
      baseline: { ...baseline.load, statuses: baseline.statuses },
      ratio_to_baseline: round(surge.load.rps / baseline.load.rps, 2),
    });
    invariants[`issued_${users}`] = { expected: limit, actual: surge.ids.length };
    invariants[`sold_out_${users}`] = { expected: users - limit, actual: surge.statuses[409] ?? 0 };
    invariants[`rows_after_drain_${users}`] = { expected: surge.ids.length, actual: facts.rows };
    invariants[`duplicates_${users}`] = { expected: 0, actual: facts.rows - facts.holders };
    invariants[`baseline_issued_${users}`] = { expected: limit, actual: baselineFacts.rows };
    headline ??= surge.load;
    headlineBaseline ??= baseline.load;
  }

  const luaDeal = await openDeal(`lua-${tag}`, CONTENDED_COUPONS);
  log(`contended: issuing script, ${CONTENDED_CONCURRENCY} in flight`);
  const lua = await timed(() => inParallel(CONTENDED_COUPONS, CONTENDED_CONCURRENCY, (i) => issueCoupon(luaDeal, i + 1, LOCAL_SOURCE)));
  const lockedDeal = await openDeal(`fu-${tag}`, CONTENDED_COUPONS);
  log(`contended: FOR UPDATE transaction, ${CONTENDED_CONCURRENCY} connections`);
  const locked = await timed(() => inParallel(CONTENDED_COUPONS, CONTENDED_CONCURRENCY, (i) => issueCouponForUpdate(db, lockedDeal, i + 1)));
  const luaRate = round(CONTENDED_COUPONS / lua.seconds);
  const lockedRate = round(CONTENDED_COUPONS / locked.seconds);
  log(`contended: script ${luaRate}/s, FOR UPDATE ${lockedRate}/s`);

  await db.end();
  await releaseSharedClients();
  return {
    load: headline!,
    baseline: { ...headlineBaseline! },
    extra: {
      ratio_to_baseline: round(headline!.rps / headlineBaseline!.rps, 2),
      min_ratio_to_baseline: Math.min(...runs.map((r) => r.ratio_to_baseline as number)),
      runs,
      contended: { script_per_s: luaRate, for_update_per_s: lockedRate, ratio: round(luaRate / lockedRate, 1), script_failures: lua.value, for_update_failures: locked.value },
    },
    invariants,
  };
};
