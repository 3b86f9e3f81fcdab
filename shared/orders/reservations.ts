import { redis } from '../clients/redis';
import { isScriptCode, scriptError } from '../redis/script-codes';
import { luaScript } from '../redis/script';
import { itemKeys, newOrderId, type OrderRecord } from './model';

const reserveScript = luaScript<[string, string, string, string, string], [number, number, string, string, number, string]>(
  new URL('./lua/order-reserve-5.lua', import.meta.url),
);
const releaseScript = luaScript<[string, string, string, string, string, string], [string, number, number]>(
  new URL('./lua/order-release-6.lua', import.meta.url),
);
const openScript = luaScript<[string, string, string], [number, number]>(new URL('./lua/sale-open-3.lua', import.meta.url));
const resetScript = luaScript<[string], [number, number]>(new URL('./lua/sale-stock-reset-1.lua', import.meta.url));
const raiseBuyersScript = luaScript<[string], number[]>(new URL('./lua/buyers-raise-1.lua', import.meta.url));

/** Buyers per script call, so one repair never holds Redis for long. */
const BUYERS_PER_CALL = 500;

/** A retry is "the same request" when it asks for the same quantity (item and buyer are in the key). */
const fingerprint = (quantity: number) => `q${quantity}`;
const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export interface Reservation {
  order: OrderRecord;
  remaining: number;
  /** True when this answers a retry of an earlier request with the same Idempotency-Key. */
  replayed: boolean;
}

export interface ReservationRequest {
  itemId: string;
  userId: number;
  quantity: number;
  idempotencyKey: string;
}

/** One Redis round trip: the whole decision and, if accepted, every write, in one script. */
export async function reserve(request: ReservationRequest, now = Date.now()): Promise<Reservation> {
  const keys = itemKeys(request.itemId);
  const order: OrderRecord = {
    orderId: newOrderId(request.itemId, now),
    itemId: request.itemId,
    userId: request.userId,
    quantity: request.quantity,
    reservedAt: now,
  };
  const reply = await reserveScript.run(
    redis(),
    [keys.sale, keys.bought, keys.idempotency(request.userId, request.idempotencyKey), keys.outbox, keys.claimed],
    [request.userId, request.quantity, order.orderId, fingerprint(request.quantity), IDEMPOTENCY_TTL_MS, JSON.stringify(order)],
  );
  if (isScriptCode(reply)) throw scriptError(reply);
  const [orderId, remaining, replayed] = reply as [string, number, number];
  return { order: { ...order, orderId }, remaining, replayed: replayed === 1 };
}

/** Undoes a reservation whose hand-off failed; false when the writer already has the order. */
export async function release(order: OrderRecord, idempotencyKey: string): Promise<boolean> {
  const keys = itemKeys(order.itemId);
  const reply = await releaseScript.run(
    redis(),
    [keys.sale, keys.bought, keys.idempotency(order.userId, idempotencyKey), keys.outbox, keys.claimed, keys.released(order.orderId)],
    [order.orderId, order.userId, order.quantity],
  );
  return reply === 1;
}

export async function openSale(itemId: string, stock: number, perUserLimit: number): Promise<void> {
  const keys = itemKeys(itemId);
  const reply = await openScript.run(redis(), [keys.sale, keys.bought, keys.outbox], [stock, perUserLimit]);
  if (isScriptCode(reply)) throw scriptError(reply);
}

/** Whether a sale has reservations (or buyers) in Redis, which MySQL does not see yet. */
export async function saleHasReservations(itemId: string): Promise<boolean> {
  const keys = itemKeys(itemId);
  return (await redis().exists(keys.bought, keys.outbox)) > 0;
}

export async function remainingStock(itemId: string): Promise<number | undefined> {
  const stock = await redis().hget(itemKeys(itemId).sale, 'stock');
  return stock === null ? undefined : Number(stock);
}

export async function pendingOrder(orderId: string, itemId: string): Promise<OrderRecord | undefined> {
  const raw = await redis().hget(itemKeys(itemId).outbox, orderId);
  return raw ? (JSON.parse(raw) as OrderRecord) : undefined;
}

export async function resetStock(itemId: string, measured: number, target: number): Promise<boolean> {
  return (await resetScript.run(redis(), [itemKeys(itemId).sale], [measured, target])) === 1;
}

/** Raises each buyer's count to at least the quantity given for them, never lowering one; returns how many rose. */
export async function raiseBuyerCounts(itemId: string, floors: Map<number, number>): Promise<number> {
  const pairs = [...floors].flat();
  let raised = 0;
  for (let i = 0; i < pairs.length; i += 2 * BUYERS_PER_CALL) {
    raised += Number(await raiseBuyersScript.run(redis(), [itemKeys(itemId).bought], pairs.slice(i, i + 2 * BUYERS_PER_CALL)));
  }
  return raised;
}
