/**
 * A waiting room in front of a sale, end to end over HTTP: BUYERS signed-in buyers (sessions made
 * beforehand) for BUYERS / 10 units, a third joining before the opening, the rest after it; every
 * buyer polls its status at the interval each answer names, claims its pass at its turn and orders
 * with it, except a share that never orders (their passes expire) and a share that stops polling
 * after joining (their places are lost at their turn). Some orders come without a pass, or with a
 * forged one. `ROOM_BENCH_BUYERS` sets the crowd (20,000 by default).
 *
 * Invariants: admitted in rank order; passes outstanding never above units left (sampled from
 * Redis as it runs); no order accepted without a valid pass; no buyer who kept polling lost its
 * place; every unit sold; the first status read after the last sale says soldOut to every waiter
 * still polling; every expired pass's unit sold to someone later (all units sold with passes
 * expired). Figures: joins/s, status reads/s and the twin's CPU per read, the error of the
 * estimated wait and of the odds against what happened; then status reads as a steady load in
 * turns with the gateway's ceiling.
 *
 * The room's budget of status reads (`ROOM_BENCH_READS_PER_SECOND`, 300 by default) must be what
 * the machine under test serves beside the joins, claims and orders, with the load generator on
 * the same two cores: a budget above it queues the polls in the generator, they arrive late, and
 * buyers who poll as told lose their turns (the invariant above says so).
 */
import { randomBytes } from 'node:crypto';
import type { Scenario } from '../support/scenario';
import { adminCookie, adminPut, pointAtTwin, releaseSharedClients, signedInCrowd } from '../support/crowd';
import { startCpuMeter } from '../support/cpu';
import { shardsOf } from '../support/redis-shards';
import { round } from '../support/round';
import { remainingStock } from '../../shared/sale/orders/sale';
import { roomKeys } from '../../shared/sale/rooms/model';
import { readRoom } from '../../shared/sale/rooms/rooms';
import { redis } from '../../shared/platform/clients/redis';

const BUYERS = Number(process.env.ROOM_BENCH_BUYERS ?? 20_000);
const UNITS = Math.max(1, Math.floor(BUYERS / 10));
/**
 * `ROOM_BENCH_BUCKETS` splits the item's stock over that many buckets (slots). The strict cap is for
 * an item not split; a split one's may be overshot by the refill moves in flight when its units are
 * summed, at most one unit (a buyer's quantity) per other bucket here, and by the orders whose used
 * pass is still to leave the item's slot (docs/waiting-room.md): the sample takes those in flight off.
 */
const BUCKETS = Number(process.env.ROOM_BENCH_BUCKETS ?? 1);
const OVER_CAP_BOUND = BUCKETS - 1;
const NEVER_ORDER = 0.15;
const STOP_POLLING = 0.1;
const WITHOUT_PASS = 50;
/**
 * Admits the units in about 80 s; a pass lasts its shortest, 10 s, the grace 10 s. The waiters near
 * their turn poll every third of the grace, about 6 × the rate in reads a second (docs/waiting-room.md):
 * 150 here, which two cores serve beside the crowd still arriving, the claims and the orders.
 */
const ROOM = {
  admitPerSecond: Math.max(1, Math.round(UNITS / 80)),
  passSeconds: 10,
  graceSeconds: 10,
  statusReadsPerSecond: Number(process.env.ROOM_BENCH_READS_PER_SECOND ?? 300),
};
/**
 * The buyers who come after the opening arrive over this long, as a crowd does, not all in one
 * instant: two cores serve the twin and the load generator both, and a backlog of thousands of
 * requests queued in the generator would hold polls back past their grace (counted as places
 * lost while polling) for a reason no deployment has.
 */
const LATE_ARRIVAL_SECONDS = Number(process.env.ROOM_BENCH_LATE_ARRIVAL_SECONDS ?? 120);
/** The run gives up this long after the opening. */
const GIVE_UP_MS = 5 * 60_000;

interface Answer {
  at: number;
  state: string;
  soldOut: boolean;
  odds: number;
  estimatedWaitSeconds: number | null;
  refreshSeconds: number;
}

interface Buyer {
  cookie: string;
  id: number;
  neverOrders: boolean;
  stopsPolling: boolean;
  early?: boolean;
  answers: Answer[];
  admittedAt?: number;
  /** Its turn came: admitted, or its place lost at its turn. */
  turnCame?: boolean;
  lost?: boolean;
  bought?: boolean;
}

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))] ?? 0;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** At most `limit` requests in flight, as a load generator's connections. */
function limiter(limit: number) {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    if (active >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    active += 1;
    try {
      return await fn();
    } finally {
      active -= 1;
      waiting.shift()?.();
    }
  };
}

export const waitingRoom: Scenario = async ({ twin, connections, log, againstCeiling }) => {
  const shape = await shardsOf(twin.redisUrl);
  await shape.close();
  pointAtTwin(twin, shape.cluster ? { REDIS_CLUSTER: 'true' } : {});
  const itemId = `room-${randomBytes(4).toString('hex')}`;
  const admin = await adminCookie(twin);
  log(`${BUYERS} buyers signing in beforehand`);
  const crowd = await signedInCrowd(twin, BUYERS);
  const buyers: Buyer[] = crowd.cookies.map((cookie, i) => ({
    cookie,
    id: crowd.ids[i]!,
    neverOrders: Math.random() < NEVER_ORDER,
    stopsPolling: Math.random() < STOP_POLLING,
    answers: [],
  }));
  await adminPut(twin, admin, `/items/${itemId}/stock`, { quantity: UNITS, perUserLimit: 1, buckets: BUCKETS });
  const early = buyers.slice(0, Math.floor(BUYERS / 3));
  for (const buyer of early) buyer.early = true;
  const late = buyers.slice(early.length);
  // Time for the first third to join before the opening, at a pessimistic 200 joins a second.
  const opensAt = Date.now() + 5_000 + (early.length / 200) * 1000;
  await adminPut(twin, admin, `/items/${itemId}/waiting-room`, { opensAt: new Date(opensAt).toISOString(), ...ROOM });

  const slot = limiter(connections);
  const statuses: Record<string, number> = {};
  let statusReads = 0;
  let readErrors = 0;
  const readMs: number[] = [];
  const call = (method: string, path: string, buyer: Buyer, headers: Record<string, string> = {}, body?: unknown) =>
    slot(async () => {
      const res = await fetch(`${twin.url}${path}`, {
        method,
        headers: { cookie: buyer.cookie, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
        body: body ? JSON.stringify(body) : undefined,
      });
      const key = `${method} ${path.replace(/\/items\/[^/]+/, '')} ${res.status}`;
      statuses[key] = (statuses[key] ?? 0) + 1;
      return { status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, unknown> };
    });

  // Sampled from Redis while the room runs: passes outstanding against units left.
  let overCap = 0;
  // A split item's used pass leaves the item's slot a moment after its unit is taken (docs/waiting-room.md): orders in flight are within the bound.
  let ordersInFlight = 0;
  let samples = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const r = await readRoom(itemId, buyers[0]!.id).catch(() => undefined);
      if (r) {
        samples += 1;
        overCap = Math.max(overCap, r.outstanding - r.units - (BUCKETS > 1 ? ordersInFlight : 0));
      }
      await sleep(100);
    }
  })();

  let lastSale = 0;
  let acceptedWithPass = 0;
  let holderRefused = 0;
  const life = async (buyer: Buyer) => {
    const joined = await call('POST', `/items/${itemId}/queue`, buyer);
    if (buyer.early) earlyJoinsDone = performance.now();
    if (joined.status !== 200 && joined.status !== 201) return;
    if (buyer.stopsPolling) return;
    while (Date.now() < opensAt + GIVE_UP_MS) {
      const sent = Date.now();
      const r = await call('GET', `/items/${itemId}/queue/me`, buyer);
      statusReads += 1;
      readMs.push(Date.now() - sent);
      if (r.status !== 200) {
        readErrors += 1;
        await sleep(1_000);
        continue;
      }
      const s = r.body as unknown as Answer;
      // Stamped when it was asked: the first read asked after the last sale must say sold out.
      buyer.answers.push({
        at: sent,
        state: s.state,
        soldOut: s.soldOut,
        odds: s.odds,
        estimatedWaitSeconds: s.estimatedWaitSeconds,
        refreshSeconds: s.refreshSeconds,
      });
      if (s.state !== 'waiting') buyer.turnCame = true;
      if (s.state === 'lost') buyer.lost = true;
      if (s.state === 'admitted') {
        buyer.admittedAt ??= Date.now();
        const pass = await call('POST', `/items/${itemId}/queue/pass`, buyer);
        if (pass.status !== 200 || buyer.neverOrders) return;
        ordersInFlight += 1;
        const order = await call(
          'POST',
          `/items/${itemId}/orders`,
          buyer,
          { 'idempotency-key': `room-${buyer.id}`, 'waiting-room-pass': String(pass.body.token) },
          { quantity: 1 },
        ).finally(() => {
          ordersInFlight -= 1;
        });
        if (order.status === 202) {
          buyer.bought = true;
          acceptedWithPass += 1;
          lastSale = Date.now();
        } else holderRefused += 1;
        return;
      }
      if (s.state !== 'waiting') return;
      // Waiters keep polling after sold out: units may come back. They stop once the run is over.
      if (s.soldOut && lastSale && Date.now() > lastSale && sold()) return;
      await sleep(s.refreshSeconds * 1000);
    }
  };
  let unitsLeft = UNITS;
  const sold = () => unitsLeft === 0;
  const stock = (async () => {
    while (sampling) {
      unitsLeft = (await remainingStock(itemId).catch(() => unitsLeft)) ?? unitsLeft;
      await sleep(200);
    }
  })();

  const cpu = startCpuMeter(twin.pids, 'surge');
  log(`${early.length} join before the opening`);
  const joinStart = performance.now();
  let earlyJoinsDone = joinStart;
  const lives = early.map(life);
  const rogue = Array.from({ length: WITHOUT_PASS }, (_, i) =>
    call(
      'POST',
      `/items/${itemId}/orders`,
      buyers[i]!,
      { 'idempotency-key': `rogue-${i}`, ...(i % 2 ? { 'waiting-room-pass': 'AAAAAAAAAAAAAAAAAAAAAA' } : {}) },
      { quantity: 1 },
    ),
  );
  await sleep(Math.max(0, opensAt - Date.now()));
  log(`opened; ${late.length} join after it, over ${LATE_ARRIVAL_SECONDS} s`);
  lives.push(...late.map((buyer, i) => sleep((i / late.length) * LATE_ARRIVAL_SECONDS * 1000).then(() => life(buyer))));
  const rogueAnswers = await Promise.all(rogue);
  await Promise.all(lives);
  const runSeconds = (performance.now() - joinStart) / 1000;
  const cpuPerRead = cpu.perRequest(Math.max(1, statusReads));
  sampling = false;
  await Promise.all([sampler, stock]);

  // Rank order: every claim below every waiter that polled to the end without a turn.
  const claimed = (await redis().zrange(roomKeys(itemId).claimed, '0', '-1', 'WITHSCORES')).filter((_, i) => i % 2 === 1).map(Number);
  const queue = await redis().zrange(roomKeys(itemId).queue, '0', '-1');
  const ordinalOf = new Map(queue.map((id, i) => [Number(id), i]));
  const neverAdmitted = buyers.filter((b) => !b.stopsPolling && !b.turnCame && b.answers.length > 0).map((b) => ordinalOf.get(b.id) ?? Infinity);
  const lostWhilePolling = buyers.filter((b) => !b.stopsPolling && b.lost).length;
  const room = await readRoom(itemId, buyers[0]!.id);
  // Waiters polling at the far interval (up to 300 s) may ask nothing more before the run ends: their first read after the sale is not held here, only counted.
  const stillWaiting = buyers.filter((b) => b.answers.length && !b.turnCame && !b.stopsPolling);
  const soldOutSeen = stillWaiting.flatMap((b) => b.answers.find((a) => a.at > lastSale) ?? []);
  const learntAfter = soldOutSeen.map((a) => (a.at - lastSale) / 1000);
  // How the places lost by buyers who kept polling were lost: their answers around it, for the report.
  const lostWhilePollingSamples = buyers
    .filter((b) => !b.stopsPolling && b.lost)
    .slice(0, 5)
    .map((b) =>
      b.answers
        .slice(-4)
        .map((a) => ({ after_opening_s: round((a.at - opensAt) / 1000, 1), state: a.state, refresh_s: a.refreshSeconds, wait_s: a.estimatedWaitSeconds })),
    );

  // The wait and odds each buyer was first told after the opening, against what happened.
  const told = buyers.flatMap((b) => {
    const first = b.answers.find((a) => a.at >= opensAt && a.state === 'waiting');
    return first ? [{ b, first }] : [];
  });
  const waitErrors = told
    .filter(({ b, first }) => b.admittedAt && first.estimatedWaitSeconds !== null)
    .map(({ b, first }) => Math.abs((b.admittedAt! - first.at) / 1000 - first.estimatedWaitSeconds!));
  const brier = told.reduce((sum, { b, first }) => sum + (first.odds - (b.bought ? 1 : 0)) ** 2, 0) / Math.max(1, told.length);
  const mean = (values: number[]) => (values.length ? round(values.reduce((a, b) => a + b, 0) / values.length, 2) : null);

  // Status reads as a steady load, in turns with the ceiling: the waiters of the sold-out room ask again (the same script as while it ran).
  const stillInLine = buyers.filter((b) => !b.stopsPolling && !b.turnCame);
  // A small run may leave nobody in line: any buyer's read then, which runs the same script.
  const waiters = stillInLine.length ? stillInLine : buyers;
  let next = 0;
  const steady = await againstCeiling(
    {
      url: twin.url,
      requests: [
        {
          method: 'GET',
          path: `/items/${itemId}/queue/me`,
          setupRequest: (req) => ({ ...req, headers: { ...req.headers, cookie: waiters[next++ % waiters.length]!.cookie } }),
        },
      ],
    },
    'GET /items/{id}/queue/me',
  );

  await releaseSharedClients();
  return {
    load: steady.load,
    ceiling: steady.ceiling,
    designs: {
      surge: { label: 'Surge: GET /items/{id}/queue/me (steady)', load: steady.load },
      ceiling: { label: "the gateway's ceiling", load: steady.ceiling },
    },
    extra: {
      status_reads_steady: { cpu_ms_per_request: steady.cpuPerRequest, ceiling_cpu_ms_per_request: steady.ceilingCpuPerRequest },
      status_reads_in_the_room: {
        requests: statusReads,
        ok: statusReads - readErrors,
        errors: readErrors,
        rps: round(statusReads / runSeconds),
        p50_ms: percentile(readMs, 0.5),
        p99_ms: percentile(readMs, 0.99),
      },
      redis: shape.shape,
      buyers: BUYERS,
      units: UNITS,
      buckets: BUCKETS,
      passes_outstanding_above_units_left_most: overCap,
      room: ROOM,
      // The third that joins before the opening, all at once: as many joins a second as the twin serves.
      joins_per_s: round(early.length / ((earlyJoinsDone - joinStart) / 1000)),
      status_reads: statusReads,
      status_reads_per_s: round(statusReads / runSeconds),
      cpu_ms_per_status_read: cpuPerRead,
      wait_error_s: { mean: mean(waitErrors), buyers: waitErrors.length },
      odds_brier_score: round(brier, 3),
      sold_out_learnt: {
        waiters: stillWaiting.length,
        read_after_the_last_sale: soldOutSeen.length,
        seconds_after_the_last_sale: { p50: percentile(learntAfter, 0.5), p99: percentile(learntAfter, 0.99) },
      },
      lost_while_polling_samples: lostWhilePollingSamples,
      passes: { issued: room.issued, expired: room.expired, lost_places: room.lost, lost_by_buyers_who_stopped_polling: room.lost - lostWhilePolling },
      statuses,
      samples,
    },
    invariants: {
      admitted_in_rank_order: { expected: true, actual: Math.max(-1, ...claimed) < Math.min(Infinity, ...neverAdmitted) },
      passes_outstanding_above_units_left_within_bound: {
        expected: `at most ${OVER_CAP_BOUND}`,
        actual: overCap <= OVER_CAP_BOUND ? `at most ${OVER_CAP_BOUND}` : overCap,
      },
      no_order_without_a_valid_pass: { expected: WITHOUT_PASS, actual: rogueAnswers.filter((a) => a.status === 403).length },
      pass_holders_refused: { expected: 0, actual: holderRefused },
      no_place_lost_while_polling: { expected: 0, actual: lostWhilePolling },
      every_unit_sold: { expected: UNITS, actual: acceptedWithPass },
      first_read_after_last_sale_sold_out: { expected: soldOutSeen.length, actual: soldOutSeen.filter((a) => a.soldOut).length },
      expired_passes_units_sold_later: { expected: true, actual: room.expired === 0 || acceptedWithPass === UNITS },
    },
  };
};
