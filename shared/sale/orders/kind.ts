import type { PoolConnection, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { logger } from '../../platform/logger';
import type { ReservationKind } from '../../reservations/kind';
import type { DecisionTable, StoredState } from '../../reservations/ledger';
import { redis } from '../../platform/clients/redis';
import { findItem, listItems } from './items';
import { itemBuckets, layoutKey, OrderRecord, orderKeys } from './model';
import { raiseBuyerCounts, release } from './sale';

interface Capacity {
  initial: number;
  sold: number;
  perUserLimit: number;
}

/** What each buyer already holds, confirmed, of each item: the guard's per-buyer check. */
async function confirmedPerBuyer(conn: PoolConnection, orders: OrderRecord[]): Promise<Map<string, number>> {
  const [rows] = await conn.query<RowDataPacket[]>(
    "SELECT item_id, user_id, SUM(quantity) AS quantity FROM orders WHERE status = 'confirmed' AND user_id IN (?) AND item_id IN (?) GROUP BY item_id, user_id",
    [[...new Set(orders.map((o) => o.userId))], [...new Set(orders.map((o) => o.itemId))]],
  );
  return new Map(rows.map((r) => [`${r.item_id} ${r.user_id}`, Number(r.quantity)]));
}

/**
 * Decides each order under the guard (in the order given) and stores it with its decision, then
 * moves `sold`. `over promises`: the orders' rows were locked and found undecided or promised, and
 * a promised row takes the decision. `first`: nothing was read of them, and each must be a new row;
 * undefined when one already had a row (the writer then rolls back and decides under lock).
 */
function storeOrders(conn: PoolConnection, fresh: OrderRecord[], items: Map<string, Capacity>, mode: 'over promises'): Promise<Map<string, StoredState>>;
function storeOrders(conn: PoolConnection, fresh: OrderRecord[], items: Map<string, Capacity>, mode: 'first'): Promise<Map<string, StoredState> | undefined>;
async function storeOrders(
  conn: PoolConnection,
  fresh: OrderRecord[],
  items: Map<string, Capacity>,
  mode: 'over promises' | 'first',
): Promise<Map<string, StoredState> | undefined> {
  const held = await confirmedPerBuyer(conn, fresh);
  const states = new Map<string, StoredState>();
  for (const order of fresh) {
    const item = items.get(order.itemId)!;
    const buyer = `${order.itemId} ${order.userId}`;
    const fits = item.sold + order.quantity <= item.initial && (held.get(buyer) ?? 0) + order.quantity <= item.perUserLimit;
    if (fits) {
      item.sold += order.quantity;
      held.set(buyer, (held.get(buyer) ?? 0) + order.quantity);
    }
    states.set(order.orderId, fits ? 'confirmed' : 'rejected');
  }
  const rows = fresh.map((o) => [o.orderId, o.itemId, o.userId, o.quantity, states.get(o.orderId), new Date(o.reservedAt)]);
  if (mode === 'first') {
    // IGNORE leaves an existing row as it is and counts only the rows inserted; every value was validated with the record.
    const [inserted] = await conn.query<ResultSetHeader>('INSERT IGNORE INTO orders (id, item_id, user_id, quantity, status, reserved_at) VALUES ?', [rows]);
    if (inserted.affectedRows !== fresh.length) return undefined;
  } else {
    await conn.query(
      'INSERT INTO orders (id, item_id, user_id, quantity, status, reserved_at) VALUES ? ON DUPLICATE KEY UPDATE status = VALUES(status), written_at = CURRENT_TIMESTAMP(3)',
      [rows],
    );
  }
  for (const itemId of new Set(fresh.map((o) => o.itemId))) {
    const { sold } = items.get(itemId)!;
    // Guarded again in SQL (and by the items_not_oversold CHECK), not only in this loop.
    const [result] = await conn.query<ResultSetHeader>('UPDATE items SET sold = ? WHERE id = ? AND ? <= initial_stock', [sold, itemId, sold]);
    if (result.affectedRows !== 1) throw new Error(`Guard refused sold=${sold} for ${itemId}`);
  }
  const rejected = [...states.values()].filter((s) => s === 'rejected').length;
  if (rejected) logger.error('Orders rejected by the database guard: Redis stock drifted', { rejected });
  return states;
}

/**
 * Where orders' decisions were kept until migration 0014: the reservation ledger's `order` rows.
 * The bridge of this release (see DecisionTable.bridge): a writer, compensation or promise of the
 * release before 0014 reads and writes only these, so this release reads and writes them beside the
 * orders' rows. Dropped, with those rows, by a contract migration one release after this one.
 */
export const ledgerOrderDecisions: DecisionTable<OrderRecord> = {
  table: 'reservation_ledger',
  scope: "kind = 'order'",
  id: 'id',
  owner: 'owner_id',
  buyer: 'buyer_id',
  units: 'units',
  state: 'state',
  rowOf: (o, state) => ({ id: o.orderId, kind: 'order', owner_id: o.itemId, buyer_id: o.userId, units: o.quantity, state }),
  decidedByStore: false,
};

/**
 * An order's decisions are its own row's status: a promise or a cancellation is a row the writer
 * later finds (locked) and, for a promise, turns into what the guard decided; a confirmed or
 * rejected order is one row, written once. For this release, across the bridge to the ledger.
 */
export const orderDecisions: DecisionTable<OrderRecord> = {
  table: 'orders',
  scope: 'TRUE',
  id: 'id',
  owner: 'item_id',
  buyer: 'user_id',
  units: 'quantity',
  state: 'status',
  rowOf: (o, status) => ({ id: o.orderId, item_id: o.itemId, user_id: o.userId, quantity: o.quantity, status, reserved_at: new Date(o.reservedAt) }),
  decidedByStore: true,
  bridge: ledgerOrderDecisions,
};

/**
 * Orders, as a kind of reservation: units of an item's stock, at most the per-buyer limit each.
 * The guard stores an order as rejected instead of confirmed when it would take `sold` past the
 * initial stock or the buyer past the limit: only possible after Redis lost writes.
 */
export const orders: ReservationKind<OrderRecord, Map<string, Capacity>> = {
  name: 'orders',
  retryText: 'The order could not be placed; retry with the same Idempotency-Key',
  decisions: orderDecisions,
  record: OrderRecord,
  idOf: (o) => o.orderId,
  ownerOf: (o) => o.itemId,
  buyerOf: (o) => o.userId,
  unitsOf: (o) => o.quantity,
  reservedAtOf: (o) => o.reservedAt,
  bucketsOf: async (itemId) => itemBuckets(itemId, (await findItem(itemId))?.buckets ?? 1),
  keysOfRecord: orderKeys,
  counter: { field: 'stock', sign: 1 },
  release,

  owners: async () => (await listItems()).map((i) => i.id),

  async lockOwners(conn, itemIds) {
    const [rows] = await conn.query<RowDataPacket[]>('SELECT id, initial_stock, sold, per_user_limit FROM items WHERE id IN (?) ORDER BY id FOR UPDATE', [
      itemIds,
    ]);
    const capacity = new Map(
      rows.map((r) => [String(r.id), { initial: Number(r.initial_stock), sold: Number(r.sold), perUserLimit: Number(r.per_user_limit) }]),
    );
    const missing = itemIds.filter((id) => !capacity.has(id));
    if (missing.length) throw new Error(`No item row for ${missing.join(', ')}`);
    return capacity;
  },

  async capacity(conn, itemId) {
    const [rows] = await conn.query<RowDataPacket[]>('SELECT initial_stock FROM items WHERE id = ?', [itemId]);
    return rows[0] ? Number(rows[0].initial_stock) : undefined;
  },

  store: (conn, fresh, items) => storeOrders(conn, fresh, items, 'over promises'),
  storeUndecided: (conn, fresh, items) => storeOrders(conn, fresh, items, 'first'),

  async rebuiltState(conn, itemId, remaining) {
    const [rows] = await conn.query<RowDataPacket[]>('SELECT per_user_limit, buckets FROM items WHERE id = ?', [itemId]);
    const row = rows[0];
    if (!row) return undefined;
    return { stock: Math.max(0, remaining), limit: Number(row.per_user_limit), ...(Number(row.buckets) > 1 ? { buckets: Number(row.buckets) } : {}) };
  },

  async restoreLayout(itemId, buckets) {
    if (buckets > 1) await redis().set(layoutKey(itemId), buckets, 'NX');
  },

  restoreBuyers: async (itemId, confirmed) => raiseBuyerCounts(itemId, (await findItem(itemId))?.buckets ?? 1, confirmed),
};
