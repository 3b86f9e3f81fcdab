import type { Pool, RowDataPacket } from 'mysql2/promise';
import type { Buyer } from './sale';

/** What MySQL holds for one sale, held against the orders the buyers were promised. */
export interface Ledger {
  initialStock: number;
  rows: number;
  confirmedRows: number;
  confirmedQuantity: number;
  /** Acknowledged orders with no row. */
  lostAcknowledged: string[];
  rejectedAcknowledged: number;
  /** Rows beyond one per buyer: each buyer sends one order, under one key. */
  duplicates: number;
}

export async function readLedger(db: Pool, itemId: string, acknowledged: Map<string, Buyer>): Promise<Ledger> {
  const [[items], [orders]] = await Promise.all([
    db.query<RowDataPacket[]>('SELECT initial_stock FROM items WHERE id = ?', [itemId]),
    db.query<RowDataPacket[]>('SELECT id, user_id, quantity, status FROM orders WHERE item_id = ?', [itemId]),
  ]);
  const status = new Map(orders.map((o) => [String(o.id), String(o.status)]));
  const confirmed = orders.filter((o) => o.status === 'confirmed');
  const rowsPerBuyer = new Map<number, number>();
  for (const order of orders) rowsPerBuyer.set(Number(order.user_id), (rowsPerBuyer.get(Number(order.user_id)) ?? 0) + 1);
  return {
    initialStock: Number(items[0]!.initial_stock),
    rows: orders.length,
    confirmedRows: confirmed.length,
    confirmedQuantity: confirmed.reduce((sum, o) => sum + Number(o.quantity), 0),
    lostAcknowledged: [...acknowledged.keys()].filter((id) => !status.has(id)),
    rejectedAcknowledged: [...acknowledged.keys()].filter((id) => status.get(id) === 'rejected').length,
    duplicates: [...rowsPerBuyer.values()].reduce((sum, n) => sum + n - 1, 0),
  };
}

/** How `GET /orders/{id}` answered each acknowledged order's buyer: status → count, and the ids it did not find. */
export interface OrderAnswers {
  statuses: Record<string, number>;
  notFound: string[];
}

const CONCURRENT_LOOKUPS = 25;

/**
 * Asks for every acknowledged order as its buyer would: 200 (pending, confirmed or rejected) when
 * the order is in the outbox or in MySQL, 404 when it is in neither.
 */
export async function orderAnswers(url: string, acknowledged: Map<string, Buyer>): Promise<OrderAnswers> {
  const statuses: Record<string, number> = {};
  const notFound: string[] = [];
  const queue = [...acknowledged];
  await Promise.all(
    Array.from({ length: CONCURRENT_LOOKUPS }, async () => {
      for (let next = queue.pop(); next; next = queue.pop()) {
        const [orderId, buyer] = next;
        const status = await fetch(`${url}/orders/${orderId}`, { headers: { cookie: buyer.cookie }, signal: AbortSignal.timeout(10_000) }).then(
          async (res) => {
            await res.arrayBuffer();
            return String(res.status);
          },
          () => 'network',
        );
        statuses[status] = (statuses[status] ?? 0) + 1;
        if (status === '404') notFound.push(orderId);
      }
    }),
  );
  return { statuses, notFound };
}
