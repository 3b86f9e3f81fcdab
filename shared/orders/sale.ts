import { redis } from '../clients/redis';
import { ratePrelude, reservationRates, throwIfRateLimited } from '../limits/rate';
import { isScriptCode, scriptError } from '../redis/script-codes';
import { luaScript, runOverPairs } from '../redis/script';
import type { Reserved } from '../reservations/place';
import { itemKeys, newOrderId, type OrderRecord } from './model';

const reserveScript = luaScript<[string, string, string, string, string, string], [number, number, string, string, number, string, number, number, number, number]>(
  new URL('./lua/order-reserve-6.lua', import.meta.url),
  [ratePrelude],
);
const releaseScript = luaScript<[string, string, string, string, string], [string, number, number]>(new URL('./lua/order-release-5.lua', import.meta.url));
const openScript = luaScript<[string, string, string], [number, number]>(new URL('./lua/sale-open-3.lua', import.meta.url));
const raiseBuyersScript = luaScript<[string], (string | number)[]>(new URL('./lua/buyers-raise-1.lua', import.meta.url));

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
}

export interface Reservation extends Reserved<OrderRecord> {
  remaining: number;
}

/** One Redis round trip: the whole decision, the buyer's and the source's rates included, and, if accepted, every write, in one script. */
export async function reserve(request: ReservationRequest, now = Date.now()): Promise<Reservation> {
  const keys = itemKeys(request.itemId);
  const order: OrderRecord = {
    orderId: newOrderId(request.itemId, now),
    itemId: request.itemId,
    userId: request.userId,
    quantity: request.quantity,
    reservedAt: now,
    idempotencyKey: request.idempotencyKey,
  };
  const rates = reservationRates('orders', keys.tag, request.userId, request.source);
  const reply = await reserveScript.run(
    redis(),
    [keys.state, keys.buyers, keys.idempotency(request.userId, request.idempotencyKey), keys.outbox, ...rates.keys],
    [request.userId, request.quantity, order.orderId, fingerprint(request.quantity), IDEMPOTENCY_TTL_MS, JSON.stringify(order), ...rates.args],
  );
  if (isScriptCode(reply)) throw scriptError(reply);
  throwIfRateLimited(reply, 'orders');
  const [orderId, remaining, replayed, pending] = reply as [string, number, number, number];
  return { record: { ...order, orderId }, remaining, replayed: replayed === 1, pending: pending === 1 };
}

/** Gives back an order the ledger cancelled (idempotent); 1 when it gave stock back now or before. */
export async function release(order: OrderRecord): Promise<number> {
  const keys = itemKeys(order.itemId);
  const idempotency = keys.idempotency(order.userId, order.idempotencyKey ?? '');
  return Number(await releaseScript.run(redis(), [keys.state, keys.buyers, idempotency, keys.outbox, keys.released(order.orderId)], [order.orderId, order.userId, order.quantity]));
}

export async function openSale(itemId: string, stock: number, perUserLimit: number): Promise<void> {
  const keys = itemKeys(itemId);
  const reply = await openScript.run(redis(), [keys.state, keys.buyers, keys.outbox], [stock, perUserLimit]);
  if (isScriptCode(reply)) throw scriptError(reply);
}

/** Whether a sale has reservations (or buyers) in Redis, which MySQL does not see yet. */
export async function saleHasReservations(itemId: string): Promise<boolean> {
  const keys = itemKeys(itemId);
  return (await redis().exists(keys.buyers, keys.outbox)) > 0;
}

export async function remainingStock(itemId: string): Promise<number | undefined> {
  const stock = await redis().hget(itemKeys(itemId).state, 'stock');
  return stock === null ? undefined : Number(stock);
}

export async function pendingOrder(orderId: string, itemId: string): Promise<OrderRecord | undefined> {
  const raw = await redis().hget(itemKeys(itemId).outbox, orderId);
  return raw ? (JSON.parse(raw) as OrderRecord) : undefined;
}

/** Raises each buyer's count to at least the quantity given for them, never lowering one; returns how many rose. */
export function raiseBuyerCounts(itemId: string, floors: { buyer: number; units: number }[]): Promise<number> {
  return runOverPairs(raiseBuyersScript, redis(), itemKeys(itemId).buyers, floors.map((f) => [f.buyer, f.units]));
}
