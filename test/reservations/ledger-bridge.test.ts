/**
 * The bridge of migration 0014 (orderDecisions.bridge, shared/reservations/ledger.ts): the release
 * before 0014 keeps orders' promises, cancellations and decisions in the reservation ledger alone,
 * this one in the orders' own rows. While a deploy shifts, both serve: each must see the other's
 * decisions, so every order is decided once. The release before is played here by what it wrote:
 * its SQL, as it ran it (git show 575625e^:shared/reservations/ledger.ts).
 */
import { describe, expect, it } from 'vitest';
import type { RowDataPacket } from 'mysql2/promise';
import { orders, orderDecisions } from '../../shared/sale/orders/kind';
import { upsertItemStock } from '../../shared/sale/orders/items';
import { orderOf } from '../../shared/sale/orders/lookup';
import type { OrderRecord } from '../../shared/sale/orders/model';
import { openSale, reserve } from '../../shared/sale/orders/sale';
import { decideFirst } from '../../shared/reservations/ledger';
import { writeReservations } from '../../shared/reservations/writer';
import { LOCAL_SOURCE } from '../../infra/twin/load-test-sources';
import { soldCount, sql, uniqueItemId } from '../support/orders';

async function reservedOrders(count: number): Promise<{ itemId: string; records: OrderRecord[] }> {
  const itemId = uniqueItemId('bridge');
  await upsertItemStock(itemId, count, 1);
  await openSale(itemId, count, 1);
  const records: OrderRecord[] = [];
  for (let i = 0; i < count; i++)
    records.push((await reserve({ itemId, userId: 5_000 + i, quantity: 1, idempotencyKey: `b${i}`, source: LOCAL_SOURCE })).record);
  return { itemId, records };
}

/** What the release before 0014 did to decide first: INSERT IGNORE into the ledger, then read what stands there. */
async function decidedByReleaseBefore(order: OrderRecord, state: 'promised' | 'cancelled'): Promise<string> {
  await sql("INSERT IGNORE INTO reservation_ledger (id, kind, owner_id, buyer_id, units, state) VALUES (?, 'order', ?, ?, ?, ?)", [
    order.orderId,
    order.itemId,
    order.userId,
    order.quantity,
    state,
  ]);
  return String((await sql<RowDataPacket>('SELECT state FROM reservation_ledger WHERE id = ?', [order.orderId]))[0]!.state);
}

/** What the release before's writer reads as decided: the ledger alone (its lockedStates). */
async function ledgerState(orderId: string): Promise<string | undefined> {
  return (await sql<RowDataPacket>('SELECT state FROM reservation_ledger WHERE id = ?', [orderId]))[0]?.state as string | undefined;
}

async function orderStatus(orderId: string): Promise<string | undefined> {
  return (await sql<RowDataPacket>('SELECT status FROM orders WHERE id = ?', [orderId]))[0]?.status as string | undefined;
}

describe('the bridge between the ledger and the orders’ rows (0014)', () => {
  it('keeps an order the release before cancelled from being stored by this writer, and says it is cancelled', async () => {
    // Prepare: the old API's compensation cancelled one order (its send failed); the message arrived anyway.
    const { itemId, records } = await reservedOrders(2);
    expect(await decidedByReleaseBefore(records[0]!, 'cancelled')).toBe('cancelled');

    // Act
    const result = await writeReservations(orders, records);

    // Assess: the cancelled one stays cancelled and takes no unit; its sibling is stored.
    expect(result.decisions.get(records[0]!.orderId)).toBe('cancelled');
    expect(result.decisions.get(records[1]!.orderId)).toBe('confirmed');
    expect(await orderStatus(records[0]!.orderId)).not.toBe('confirmed');
    expect(await soldCount(itemId)).toBe(1);
    expect((await orderOf(records[0]!.orderId, records[0]!.userId)).status).toBe('cancelled');
  });

  it('stores an order the release before promised, and tells the release before it is decided', async () => {
    // Prepare
    const { records } = await reservedOrders(1);
    expect(await decidedByReleaseBefore(records[0]!, 'promised')).toBe('promised');

    // Act
    const result = await writeReservations(orders, records);

    // Assess
    expect(result.decisions.get(records[0]!.orderId)).toBe('confirmed');
    expect(await ledgerState(records[0]!.orderId)).toBe('confirmed');
  });

  it('records what this writer stored in the ledger too, so the release before’s writer does not store it again', async () => {
    // Prepare
    const { records } = await reservedOrders(2);

    // Act
    await writeReservations(orders, records);

    // Assess
    for (const record of records) expect(await ledgerState(record.orderId)).toBe('confirmed');
  });

  it('lets neither release overrule the other’s first decision', async () => {
    // Prepare: one order cancelled by the release before, one promised by this one.
    const { records } = await reservedOrders(2);
    await decidedByReleaseBefore(records[0]!, 'cancelled');
    expect(await decideFirst(orderDecisions, records[1]!, 'promised')).toBe('promised');

    // Act: this release promises the first; the release before cancels the second.
    const promised = await decideFirst(orderDecisions, records[0]!, 'promised');
    const cancelled = await decidedByReleaseBefore(records[1]!, 'cancelled');

    // Assess: the first decision stands in both places.
    expect(promised).toBe('cancelled');
    expect(await orderStatus(records[0]!.orderId)).toBe('cancelled');
    expect(cancelled).toBe('promised');
    expect(await orderStatus(records[1]!.orderId)).toBe('promised');
  });

  it('decides an order once when both releases decide it at the same moment', async () => {
    // Prepare
    const { records } = await reservedOrders(20);

    // Act: for each order, this release cancels while the release before promises, concurrently.
    const outcomes = await Promise.all(
      records.map(async (record) => Promise.all([decideFirst(orderDecisions, record, 'cancelled'), decidedByReleaseBefore(record, 'promised')])),
    );

    // Assess: both saw the same decision, and both tables hold it.
    for (const [i, [ours, theirs]] of outcomes.entries()) {
      expect(ours, records[i]!.orderId).toBe(theirs);
      expect(await orderStatus(records[i]!.orderId)).toBe(ours);
      expect(await ledgerState(records[i]!.orderId)).toBe(ours);
    }
  });
});
