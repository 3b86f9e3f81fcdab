import type { RowDataPacket } from 'mysql2';
import { db } from '../../platform/clients/mysql';
import { NotFoundError } from '../../platform/errors';
import { ownerOfReservation } from '../../reservations/ids';
import type { OrderStatus } from './model';
import { bridgedDecision } from '../../reservations/ledger';
import { orderDecisions } from './kind';
import { pendingOrder } from './sale';

export interface OrderView {
  itemId: string;
  quantity: number;
  status: OrderStatus;
}

async function storedOrder(orderId: string) {
  const [rows] = await db().query<RowDataPacket[]>('SELECT item_id, user_id, quantity, status FROM orders WHERE id = ?', [orderId]);
  const row = rows[0];
  return row && viewOf({ itemId: String(row.item_id), userId: Number(row.user_id), quantity: Number(row.quantity), status: String(row.status) });
}

// A promise is an order on its way to the writer, as the client was told.
const viewOf = (order: { itemId: string; userId: number; quantity: number; status: string }) => ({
  ...order,
  status: (order.status === 'promised' ? 'pending' : order.status) as OrderStatus,
});

/**
 * An order the release before 0014 promised or cancelled: only its ledger row knows
 * (orderDecisions.bridge). Asked last, once neither its row nor the outbox has it, so an order
 * on its way costs no ledger read.
 */
async function bridgedOrder(orderId: string) {
  const decision = await bridgedDecision(orderDecisions, orderId);
  return decision && viewOf({ itemId: decision.owner, userId: decision.buyer, quantity: decision.units, status: String(decision.state) });
}

/**
 * What a retry of a reservation that has left the outbox answers: the writer stores before it
 * clears the outbox, so MySQL has its row and the status it stored (confirmed, or rejected); a row
 * missing still (Redis lost the outbox entry, the reconciler yet to store it) is on its way.
 */
export async function writtenStatus(orderId: string): Promise<OrderStatus> {
  return ((await storedOrder(orderId)) ?? (await bridgedOrder(orderId)))?.status ?? 'pending';
}

/** The buyer's order wherever it is on its way; another user's order answers exactly like a missing one. */
export async function orderOf(orderId: string, userId: number): Promise<OrderView> {
  // MySQL first, then the outbox, then MySQL again: the writer stores before it clears the outbox,
  // so an order moving between the two in the meantime is still found. MySQL's row also knows a
  // cancelled order and one promised to a retry whose outbox entry Redis lost.
  const order =
    (await storedOrder(orderId)) ??
    (await pendingOrder(orderId, ownerOfReservation(orderId), userId).then((p) => p && { ...p, status: 'pending' as const })) ??
    (await storedOrder(orderId)) ??
    (await bridgedOrder(orderId));
  if (!order || order.userId !== userId) throw new NotFoundError('No such order');
  return { itemId: order.itemId, quantity: order.quantity, status: order.status };
}
