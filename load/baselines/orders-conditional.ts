/**
 * The strongest MySQL designs for orders, beside the FOR UPDATE one: no read before the write, one
 * conditional UPDATE that takes the units only if they are there, and the order's INSERT.
 *
 * - In one short transaction: stock and order stay together (a failed INSERT gives the units back
 *   by rolling back), but the item row stays locked from the UPDATE to the COMMIT.
 * - In autocommit: each statement commits alone, so the row is locked only for the UPDATE; an
 *   INSERT that fails gives the units back with a second UPDATE, and a crash between the two loses
 *   them. An upper bound, not a design to ship.
 *
 * Both check the quantity against the per-buyer limit but not the buyer's earlier orders: each
 * buyer of the bench orders once, and leaving that read out only makes these baselines faster.
 * Served by the twin under /__baseline/… (the benches' extra functions); never deployed.
 */
import type { ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import * as z from '../../shared/platform/zod';
import { db, type Database } from '../../shared/platform/clients/mysql';
import { inTransaction, type ConnectionSource } from '../../shared/platform/db/transaction';
import { AppError, NotFoundError } from '../../shared/platform/errors';
import '../../shared/sale/orders/codes';
import { api } from '../../shared/api/api';
import { json } from '../../shared/platform/http/response';
import { ItemId, newOrderId, Quantity } from '../../shared/sale/orders/model';

const TAKE_UNITS = 'UPDATE items SET sold = sold + ? WHERE id = ? AND sold + ? <= initial_stock AND ? <= per_user_limit';
const GIVE_UNITS_BACK = 'UPDATE items SET sold = sold - ? WHERE id = ?';
const INSERT_ORDER = "INSERT INTO orders (id, item_id, user_id, quantity, status, reserved_at) VALUES (?, ?, ?, ?, 'confirmed', NOW(3))";

type Query = Pick<Database, 'query'>;

/** Why the conditional UPDATE took nothing; read only on that path. */
async function refusal(source: Query, itemId: string, quantity: number): Promise<AppError> {
  const [items] = await source.query<RowDataPacket[]>('SELECT per_user_limit FROM items WHERE id = ?', [itemId]);
  if (!items[0]) return new NotFoundError('No such item');
  if (quantity > Number(items[0].per_user_limit)) return new AppError('LIMIT_EXCEEDED', 'That would exceed the per-buyer limit');
  return new AppError('SOLD_OUT', 'Not enough stock left');
}

async function takeUnits(source: Query, itemId: string, quantity: number): Promise<void> {
  const [taken] = await source.query<ResultSetHeader>(TAKE_UNITS, [quantity, itemId, quantity, quantity]);
  if (taken.affectedRows === 0) throw await refusal(source, itemId, quantity);
}

export async function placeOrderConditionalTransaction(pool: ConnectionSource, itemId: string, userId: number, quantity: number): Promise<string> {
  return inTransaction(pool, async (conn) => {
    await takeUnits(conn, itemId, quantity);
    const orderId = newOrderId(itemId);
    await conn.query(INSERT_ORDER, [orderId, itemId, userId, quantity]);
    return orderId;
  });
}

export async function placeOrderConditionalAutocommit(pool: Query, itemId: string, userId: number, quantity: number): Promise<string> {
  await takeUnits(pool, itemId, quantity);
  const orderId = newOrderId(itemId);
  try {
    await pool.query(INSERT_ORDER, [orderId, itemId, userId, quantity]);
  } catch (error) {
    await pool.query(GIVE_UNITS_BACK, [quantity, itemId]);
    throw error;
  }
  return orderId;
}

const Confirmed = z.strictObject({ orderId: z.string(), status: z.literal('confirmed') });

const orderApi = () =>
  api({
    access: 'user',
    params: z.object({ itemId: ItemId }),
    body: z.strictObject({ quantity: Quantity }),
    answers: { 201: Confirmed },
    errors: ['NOT_FOUND', 'LIMIT_EXCEEDED', 'SOLD_OUT'],
  });

export const transactionHandler = orderApi().handler(async ({ input, principal }) =>
  json(201, { orderId: await placeOrderConditionalTransaction(db(), input.params.itemId, principal.userId, input.body.quantity), status: 'confirmed' }),
);

export const autocommitHandler = orderApi().handler(async ({ input, principal }) =>
  json(201, { orderId: await placeOrderConditionalAutocommit(db(), input.params.itemId, principal.userId, input.body.quantity), status: 'confirmed' }),
);
