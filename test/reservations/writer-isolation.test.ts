/**
 * The writer's lock-and-decide path against a compensation, on two real connections: the writer
 * reads an order's decision with FOR UPDATE and finds none; under REPEATABLE READ that read locks
 * the gap, so a compensation's INSERT of `cancelled` waits for the writer's commit and then finds
 * the order stored. Under READ COMMITTED it would not wait: the compensation would give the units
 * back for an order the writer then confirms. The isolation level is the server's (set for Aurora
 * in its parameter group, for the twin's MariaDB on its command line), not left to a default.
 */
import type { PoolConnection, RowDataPacket } from 'mysql2/promise';
import { describe, expect, it } from 'vitest';
import { db } from '../../shared/platform/clients/mysql';
import { upsertItemStock } from '../../shared/sale/orders/items';
import { orderDecisions, orders } from '../../shared/sale/orders/kind';
import { newOrderId, type OrderRecord } from '../../shared/sale/orders/model';
import { decideFirst, lockedStates, recordStored } from '../../shared/reservations/ledger';
import { until } from '../../shared/platform/wait';
import { sql, uniqueItemId } from '../support/orders';

const lockWaits = async () => Number((await sql<RowDataPacket>("SELECT COUNT(*) AS n FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'"))[0]!.n);

describe("the writer's isolation", () => {
  it('runs every connection of the pool at REPEATABLE READ', async () => {
    // Act
    // MariaDB 10.11 names it tx_isolation; 11.1 on, and MySQL 8, transaction_isolation.
    const [rows] = await db().query<RowDataPacket[]>(
      "SELECT VARIABLE_VALUE AS level FROM information_schema.SESSION_VARIABLES WHERE VARIABLE_NAME IN ('TX_ISOLATION', 'TRANSACTION_ISOLATION')",
    );

    // Assess
    expect(new Set(rows.map((row) => row.level))).toEqual(new Set(['REPEATABLE-READ']));
  });

  it('holds a compensation back while the writer decides an order it found undecided, and the compensation then finds it stored', async () => {
    // Prepare: an order the writer is about to store, its decision read (none) and locked.
    const itemId = uniqueItemId('isolation');
    await upsertItemStock(itemId, 10, 5);
    const record: OrderRecord = {
      orderId: newOrderId(itemId, Date.now()),
      itemId,
      userId: 4_242,
      quantity: 1,
      reservedAt: Date.now(),
      idempotencyKey: 'isolation',
    };
    const writer: PoolConnection = await db().getConnection();
    try {
      await writer.beginTransaction();
      const owners = await orders.lockOwners(writer, [itemId]);
      expect((await lockedStates(writer, orderDecisions, [record.orderId])).size).toBe(0);

      // Act: the compensation asks to cancel it meanwhile, then the writer stores it and commits.
      const compensation = decideFirst(orderDecisions, record, 'cancelled');
      await until(async () => (await lockWaits()) > 0, 10_000, 'the compensation waiting on the writer’s lock');
      const stored = await orders.store(writer, [record], owners);
      await recordStored(writer, orderDecisions, [record], stored, orders.idOf);
      await writer.commit();

      // Assess
      expect(await compensation).toBe('confirmed');
      expect(await sql<RowDataPacket>('SELECT status FROM orders WHERE id = ?', [record.orderId])).toEqual([{ status: 'confirmed' }]);
    } finally {
      writer.release();
    }
  });
});
