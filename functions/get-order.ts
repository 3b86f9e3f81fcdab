import type { RowDataPacket } from 'mysql2';
import * as z from '../shared/platform/zod';
import { db } from '../shared/platform/clients/mysql';
import { NotFoundError } from '../shared/platform/errors';
import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { OrderId } from '../shared/orders/model';
import { pendingOrder } from '../shared/orders/sale';
import { ownerOfReservation } from '../shared/reservations/ids';
import { ledgerOrder } from '../shared/reservations/ledger';

const Params = z.object({ orderId: OrderId });

async function storedOrder(orderId: string) {
  const [rows] = await db().query<RowDataPacket[]>('SELECT item_id, user_id, quantity, status FROM orders WHERE id = ?', [orderId]);
  const row = rows[0];
  return row && { itemId: String(row.item_id), userId: Number(row.user_id), quantity: Number(row.quantity), status: String(row.status) };
}

/** Another user's order answers exactly like a missing one. */
export const handler = api({ access: 'user', params: Params }).handler(async ({ input, principal }) => {
  const { orderId } = input.params;
  // MySQL first, then the outbox, then MySQL again: the writer stores before it clears the outbox,
  // so an order moving between the two in the meantime is still found. Last the ledger, which
  // knows a cancelled order and one promised to a retry whose outbox entry Redis lost.
  const order =
    (await storedOrder(orderId)) ??
    (await pendingOrder(orderId, ownerOfReservation(orderId), principal.userId).then((p) => p && { ...p, status: 'pending' })) ??
    (await storedOrder(orderId)) ??
    (await ledgerOrder(orderId));
  if (!order || order.userId !== principal.userId) throw new NotFoundError('No such order');
  return json(200, { orderId, itemId: order.itemId, quantity: order.quantity, status: order.status });
});
