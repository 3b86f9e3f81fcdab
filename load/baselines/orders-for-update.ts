/**
 * The baseline Surge's orders are measured against: the original service's way, one MySQL
 * transaction per order that locks the item row (SELECT … FOR UPDATE), checks stock and the
 * buyer's limit, then updates and inserts. Served by the twin's gateway under
 * /__baseline/… (the benches' extra functions) so both are measured alike; never deployed.
 */
import type { RowDataPacket } from 'mysql2/promise';
import * as z from '../../shared/platform/zod';
import { db } from '../../shared/platform/clients/mysql';
import { inTransaction, type ConnectionSource } from '../../shared/platform/db/transaction';
import { AppError, NotFoundError } from '../../shared/platform/errors';
import '../../shared/sale/orders/codes';
import { api } from '../../shared/api/api';
import { json } from '../../shared/platform/http/response';
import { ItemId, newOrderId, Quantity } from '../../shared/sale/orders/model';

export async function placeOrderForUpdate(pool: ConnectionSource, itemId: string, userId: number, quantity: number): Promise<string> {
  return inTransaction(pool, async (conn) => {
    const [items] = await conn.query<RowDataPacket[]>('SELECT initial_stock, sold, per_user_limit FROM items WHERE id = ? FOR UPDATE', [itemId]);
    const item = items[0];
    if (!item) throw new NotFoundError('No such item');
    if (Number(item.sold) + quantity > Number(item.initial_stock)) throw new AppError('SOLD_OUT', 'Not enough stock left');
    const [bought] = await conn.query<RowDataPacket[]>('SELECT COALESCE(SUM(quantity), 0) AS n FROM orders WHERE item_id = ? AND user_id = ?', [
      itemId,
      userId,
    ]);
    if (Number(bought[0]!.n) + quantity > Number(item.per_user_limit)) throw new AppError('LIMIT_EXCEEDED', 'That would exceed the per-buyer limit');
    const orderId = newOrderId(itemId);
    await conn.query('UPDATE items SET sold = sold + ? WHERE id = ?', [quantity, itemId]);
    await conn.query("INSERT INTO orders (id, item_id, user_id, quantity, status, reserved_at) VALUES (?, ?, ?, ?, 'confirmed', NOW(3))", [
      orderId,
      itemId,
      userId,
      quantity,
    ]);
    return orderId;
  });
}

const Confirmed = z.strictObject({ orderId: z.string(), status: z.literal('confirmed') });

export const handler = api({
  access: 'user',
  params: z.object({ itemId: ItemId }),
  body: z.strictObject({ quantity: Quantity }),
  answers: { 201: Confirmed },
  errors: ['NOT_FOUND', 'LIMIT_EXCEEDED', 'SOLD_OUT'],
}).handler(async ({ input, principal }) => {
  const orderId = await placeOrderForUpdate(db(), input.params.itemId, principal.userId, input.body.quantity);
  return json(201, { orderId, status: 'confirmed' });
});
