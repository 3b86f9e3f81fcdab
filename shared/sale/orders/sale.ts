import { redis } from '../../platform/clients/redis';
import { UnavailableError } from '../../platform/errors';
import { count } from '../../platform/metrics';
import { LIMITS } from '../../limits/limits';
import { reservationRates, throwIfRateLimited } from '../../limits/rate';
import { isRefusal, scriptError } from '../../platform/redis/script-codes';
import { BucketCode } from '../../reservations/codes';
import { OrderCode } from './codes';
import { luaScript, runOverPairs, type RedisClient } from '../../platform/redis/script';
import { bucketOf, clearMove, parseMoves, refill, REFILL_DEADLINE_MS, splitUnits, type Move } from '../../reservations/buckets';
import type { Reserved } from '../../reservations/place';
import { connectionToken } from '../../platform/clients/replicas';
import { itemBuckets, itemKeys, layoutKey, newOrderId, orderKeys, type OrderRecord } from './model';

const reserveScript = luaScript<
  [string, string, string, string, string, string, string, string],
  [number, number, string, string, number, string, number, number, number, number, number, number, string, number]
>(new URL('./lua/order-reserve-8.lua', import.meta.url));
const releaseScript = luaScript<[string, string, string, string, string], [string, number, number]>(new URL('./lua/order-release-5.lua', import.meta.url));
const openScript = luaScript<[string, string, string], [number, number, number]>(new URL('./lua/sale-open-3.lua', import.meta.url));
const raiseBuyersScript = luaScript<[string], (string | number)[]>(new URL('./lua/buyers-raise-1.lua', import.meta.url));

/** A sale's rates, per buyer and per source, taken inside its script. */
const ORDER_RATES = { perBuyer: LIMITS.ordersPerBuyer, perSource: LIMITS.ordersPerSource };

/** A retry is "the same request" when it asks for the same quantity (item and buyer are in the key). */
const fingerprint = (quantity: number) => `q${quantity}`;
const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export interface ReservationRequest {
  itemId: string;
  userId: number;
  quantity: number;
  idempotencyKey: string;
  /** The client's address, for the per-source rate. */
  source: string;
  /** The token of the buyer's waiting-room pass, for an item with a room. */
  pass?: string;
}

export interface Reservation extends Reserved<OrderRecord> {
  remaining: number;
  /** The waiting-room pass this order used up, where it was kept and until when: what givePassBack restores. */
  usedPass?: { member: string; expiresAt: number; keys: string[] };
}

/** How many buckets each item has, as this instance last learnt it; a script that finds otherwise says so. */
const layouts = new Map<string, number>();

/** How many buckets the item has: what this instance knows, or what Redis says (absent: one, the item's own keys). */
export async function bucketCount(itemId: string, fresh = false): Promise<number> {
  const known = layouts.get(itemId);
  if (known !== undefined && !fresh) return known;
  const count = Number((await redis().get(layoutKey(itemId))) ?? 1);
  layouts.set(itemId, count);
  return count;
}

/**
 * One Redis round trip: the whole decision, the buyer's and the source's rates included, and, if
 * accepted, every write, in one script. An item split into buckets reserves in the buyer's
 * bucket; when that one ran dry, units are moved from the others (refill) before the buyer can be
 * told SOLD_OUT, which then holds for the whole item. The move a refill made for the buyer is
 * taken in by the same script that then reserves, so other buyers cannot drain it first.
 * `client` is the connection the script goes over: the instance's own, unless a bench stands in
 * for many instances, each with a connection of its own (heldByReplicas answers only for the
 * instance's own, so a reservation made over another is never taken as held).
 */
export async function reserve(request: ReservationRequest, now = Date.now(), client: RedisClient = redis()): Promise<Reservation> {
  let buckets = await bucketCount(request.itemId);
  let relearnt = false;
  const refillsEnd = performance.now() + REFILL_DEADLINE_MS;
  let keep: Move | undefined;
  for (let refills = 0; ; ) {
    const bucket = bucketOf(request.userId, buckets);
    const keys = itemKeys(request.itemId, bucket, buckets);
    const order: OrderRecord = {
      orderId: newOrderId(request.itemId, now),
      itemId: request.itemId,
      userId: request.userId,
      quantity: request.quantity,
      reservedAt: now,
      idempotencyKey: request.idempotencyKey,
      ...(buckets > 1 ? { bucket: [bucket, buckets] as [number, number] } : {}),
    };
    const rates = reservationRates(ORDER_RATES, keys.tag, request.userId, request.source);
    const connection = connectionToken(keys.state, client);
    const reply = await reserveScript.run(
      client,
      [
        keys.state,
        keys.buyers,
        keys.idempotency(request.userId, request.idempotencyKey),
        keys.outbox,
        ...rates.keys,
        keys.movedIn(keep?.id ?? 'none'),
        keys.passes,
      ],
      [
        request.userId,
        request.quantity,
        order.orderId,
        fingerprint(request.quantity),
        IDEMPOTENCY_TTL_MS,
        JSON.stringify(order),
        ...rates.args,
        buckets,
        keep?.units ?? 0,
        request.pass ?? '',
        now,
      ],
    );
    if (keep) {
      // Taken in whatever the answer, unless the bucket lost its state: the move then waits for repair, as in refill.
      if (reply === OrderCode.NotOnSale) throw new UnavailableError('A bucket of this sale is being repaired; retry');
      await clearMove(itemBuckets(request.itemId, buckets), keep);
      keep = undefined;
    }
    if (reply === BucketCode.LayoutChanged || reply === OrderCode.NotOnSale) {
      // The sale may have been opened anew with another number of buckets since this instance learnt it.
      if (!relearnt) {
        relearnt = true;
        const learnt = await bucketCount(request.itemId, true);
        if (learnt !== buckets) {
          buckets = learnt;
          continue;
        }
      }
      if (reply === BucketCode.LayoutChanged) throw new UnavailableError('The order could not be placed; retry with the same Idempotency-Key');
    }
    if (reply === BucketCode.BucketDry) {
      if (performance.now() > refillsEnd) throw new UnavailableError('The order could not be placed; retry with the same Idempotency-Key');
      const refilled = await refill(request.itemId, itemBuckets(request.itemId, buckets), bucket, request.quantity, refills++ > 0);
      if (!refilled) throw scriptError(OrderCode.SoldOut);
      keep = refilled.keep;
      continue;
    }
    if (isRefusal(reply)) throw scriptError(reply);
    throwIfRateLimited(reply, 'Too many orders; try again later');
    const [orderId, remaining, replayed, pending, passExpiry] = reply as [string, number, number, number, (string | number)?];
    const reservation: Reservation = { record: { ...order, orderId }, remaining, replayed: replayed === 1, pending: pending === 1, connection };
    if (Number(passExpiry ?? 0) > 0) {
      count('room.converted');
      const member = `${request.userId}:${request.pass}`;
      // A split item's pass is checked and used in the buyer's bucket; the item's own slot, where the room counts it outstanding,
      // is told here, so the room sees the unit taken and the place freed together, as for an item not split. Should this be
      // lost, the pass counts outstanding until it expires: the room admits less, never more.
      if (buckets > 1)
        await redis()
          .zrem(itemKeys(request.itemId).passes, member)
          .catch(() => undefined);
      reservation.usedPass = { member, expiresAt: Number(passExpiry), keys: buckets > 1 ? [keys.passes, itemKeys(request.itemId).passes] : [keys.passes] };
    }
    return reservation;
  }
}

/**
 * Gives a buyer back the pass an order used up when that order was answered 503 (its hand-off
 * failed: the order was given back, or may stand pending): the buyer retries with the same key and
 * the same pass, as after any refusal, until the pass's own expiry. Should Redis fail here too, the
 * retry is refused 403 and the pass's place comes back to the room at its expiry. A pass given back
 * to an order that stands is bounded by the buyer's limit, which the reservation script checks.
 */
export async function givePassBack(reservation: Reservation): Promise<void> {
  const used = reservation.usedPass;
  if (!used) return;
  await Promise.all(used.keys.map((key) => redis().zadd(key, used.expiresAt, used.member))).catch(() => undefined);
}

/** Gives back an order cancelled in MySQL, its own row's decision (idempotent); 1 when it gave stock back now or before. */
export async function release(order: OrderRecord): Promise<number> {
  const keys = orderKeys(order);
  const idempotency = keys.idempotency(order.userId, order.idempotencyKey ?? '');
  return Number(
    await releaseScript.run(
      redis(),
      [keys.state, keys.buyers, idempotency, keys.outbox, keys.released(order.orderId)],
      [order.orderId, order.userId, order.quantity],
    ),
  );
}

/**
 * Opens a sale in Redis, its stock split over `buckets` (each bucket on a slot of its own, opened
 * by one script there); the buckets of an earlier layout go first. Only before any reservation.
 */
export async function openSale(itemId: string, stock: number, perUserLimit: number, buckets = 1): Promise<void> {
  const before = await bucketCount(itemId, true);
  // A waiting room (shared/sale/rooms/) marks every bucket's state: the new layout's buckets are marked as the old ones were.
  const roomed = before !== buckets && (await redis().hget(itemKeys(itemId, 0, before).state, 'room')) !== null;
  if (before !== buckets) await Promise.all(itemBuckets(itemId, before).map((keys) => redis().del(keys.state)));
  const shares = splitUnits(stock, buckets);
  const replies = await Promise.all(
    itemBuckets(itemId, buckets).map((keys, k) => openScript.run(redis(), [keys.state, keys.buyers, keys.outbox], [shares[k]!, perUserLimit, buckets])),
  );
  const refused = replies.find(isRefusal);
  if (refused !== undefined) throw scriptError(refused);
  if (roomed) await Promise.all(itemBuckets(itemId, buckets).map((keys) => redis().hset(keys.state, 'room', 1)));
  await (buckets > 1 ? redis().set(layoutKey(itemId), buckets) : redis().del(layoutKey(itemId)));
  layouts.set(itemId, buckets);
}

/** Whether a sale has reservations (or buyers) in Redis, which MySQL does not see yet, in any bucket of its current layout or of `buckets`. */
export async function saleHasReservations(itemId: string, buckets = 1): Promise<boolean> {
  const current = await bucketCount(itemId, true);
  const counts = current === buckets ? [current] : [current, buckets];
  const found = await Promise.all(counts.flatMap((n) => itemBuckets(itemId, n)).map((keys) => redis().exists(keys.buyers, keys.outbox)));
  return found.some((n) => n > 0);
}

/** Units left in Redis: the buckets' stock and the units moving between them; undefined when Redis has no sale. */
export async function remainingStock(itemId: string): Promise<number | undefined> {
  const buckets = itemBuckets(itemId, await bucketCount(itemId, true));
  const [stocks, moves] = await Promise.all([
    Promise.all(buckets.map((keys) => redis().hget(keys.state, 'stock'))),
    buckets.length > 1
      ? Promise.all(
          buckets.map(async (keys, k) =>
            parseMoves(
              k,
              await redis()
                .hgetall(keys.moves)
                .then((h) => Object.entries(h).flat()),
            ),
          ),
        )
      : [],
  ]);
  if (stocks.every((s) => s === null)) return undefined;
  const moving = moves.flat().reduce((sum, m) => sum + m.units, 0);
  return stocks.reduce((sum, s) => sum + Number(s ?? 0), 0) + moving;
}

/** An order still in its bucket's outbox; the buyer names the bucket. */
export async function pendingOrder(orderId: string, itemId: string, userId: number): Promise<OrderRecord | undefined> {
  const buckets = await bucketCount(itemId);
  const raw = await redis().hget(itemKeys(itemId, bucketOf(userId, buckets), buckets).outbox, orderId);
  return raw ? (JSON.parse(raw) as OrderRecord) : undefined;
}

/** Raises each buyer's count (in their bucket) to at least the quantity given for them, never lowering one; returns how many rose. */
export async function raiseBuyerCounts(itemId: string, buckets: number, floors: { buyer: number; units: number }[]): Promise<number> {
  const perBucket = itemBuckets(itemId, buckets).map((keys, k) => [keys.buyers, floors.filter((f) => bucketOf(f.buyer, buckets) === k)] as const);
  const raised = await Promise.all(
    perBucket.map(([key, group]) =>
      runOverPairs(
        raiseBuyersScript,
        redis(),
        key,
        group.map((f) => [f.buyer, f.units]),
      ),
    ),
  );
  return raised.reduce((sum, n) => sum + n, 0);
}
