/**
 * A waiting room that Redis lost (a failover under asynchronous replication, an AOF restart) is
 * put back from MySQL by the repair that rebuilds the sale: the sale never comes back open.
 */
import type { SQSEvent } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as writeReservations } from '../../../functions/write-reservations';
import { LOCAL_SOURCE } from '../../../infra/twin/load-test-sources';
import { encodeHandOffs } from '../../../shared/reservations/hand-off';
import { redis } from '../../../shared/platform/clients/redis';
import { upsertItemStock } from '../../../shared/sale/orders/items';
import { ordersBehindRooms } from '../../../shared/sale/rooms/sale-kind';
import { itemKeys } from '../../../shared/sale/orders/model';
import { openSale, reserve } from '../../../shared/sale/orders/sale';
import { roomKeys } from '../../../shared/sale/rooms/model';
import { repairRoom } from '../../../shared/sale/rooms/admin';
import { reconcileOwner } from '../../../shared/reservations/reconcile';
import { fixture, lambdaContext } from '../../support/events';
import { checkpoint } from '../../support/lost-writes';
import { sql, uniqueItemId } from '../../support/orders';
import { ownReservationQueue, testSqs } from '../../support/queues';
import { keysMatching } from '../../support/redis-nodes';
import { admittedClaim, body, openRoom, passesAndUnits, roomRoutes } from '../../support/rooms';
import { signedInUsers, type SignedInUser } from '../../support/sessions';

const routes = await roomRoutes();
await ownReservationQueue(testSqs());

let admin: SignedInUser;
let buyers: SignedInUser[];

beforeAll(async () => {
  admin = (await signedInUsers(1, 'admin'))[0]!;
  buyers = await signedInUsers(2);
});

const repair = (itemId: string) => reconcileOwner(ordersBehindRooms, itemId, { relayOlderThanMs: Number.POSITIVE_INFINITY, repair: true, oneLook: true });

/** An item on sale in MySQL and Redis with a room in front of it, the first buyer holding a pass. */
async function roomWithPass(stock: number): Promise<{ itemId: string; pass: string }> {
  const itemId = uniqueItemId('room-repair');
  await upsertItemStock(itemId, stock, 1);
  await openSale(itemId, stock, 1);
  expect((await routes.put(itemId, admin, openRoom({ admitPerSecond: 7 }))).statusCode).toBe(200);
  expect((await routes.join(itemId, buyers[0]!)).statusCode).toBe(201);
  const claimed = await routes.claim(itemId, buyers[0]!);
  expect(claimed.statusCode).toBe(200);
  return { itemId, pass: body(claimed).token };
}

describe('a waiting room Redis lost', () => {
  it('comes back with the sale rebuilt from MySQL: its mark, its settings, and orders only with a pass', async () => {
    // Prepare: everything of the item's slot is lost, the sale and the room with it.
    const { itemId, pass } = await roomWithPass(5);
    await redis().del(...(await keysMatching(`{item:${itemId}}*`)));

    // Act
    const report = await repair(itemId);
    const withoutPass = await routes.order(itemId, buyers[1]!, 'no-pass');
    const withLostPass = await routes.order(itemId, buyers[0]!, 'lost-pass', pass);
    const joined = await routes.join(itemId, buyers[1]!);
    // The served count restarted at the repair: the first turn comes within a seventh of a second.
    const claimed = await admittedClaim(routes, itemId, buyers[1]!);
    const withNewPass = await routes.order(itemId, buyers[1]!, 'new-pass', body(claimed).token);

    // Assess
    expect(await redis().hget(itemKeys(itemId).state, 'room')).toBe('1');
    expect(await redis().hmget(roomKeys(itemId).room, 'rate', 'pass', 'grace', 'paused', 'budget')).toEqual(['7', '120000', '60000', '0', '1000']);
    expect([withoutPass.statusCode, body(withoutPass).error?.code]).toEqual([403, 'PASS_REQUIRED']);
    expect([withLostPass.statusCode, body(withLostPass).error.code]).toEqual([403, 'PASS_REQUIRED']);
    expect([joined.statusCode, body(joined)]).toEqual([201, { position: 1 }]);
    expect(claimed.statusCode).toBe(200);
    expect(withNewPass.statusCode).toBe(202);
    expect(report).toMatchObject({ rebuilt: true, attachedRepaired: true });
  });

  it('takes no order without a pass while the sale outlived the room, and the repair puts the room and its mark back', async () => {
    // Prepare: the room's keys are lost, its mark with them, the sale's state is not.
    const { itemId } = await roomWithPass(5);
    const k = roomKeys(itemId);
    await redis().del(k.room, k.queue, k.turns, k.claimed, k.waiters);
    const markedWithoutRoom = await routes.order(itemId, buyers[1]!, 'marked');
    await redis().hdel(itemKeys(itemId).state, 'room');

    // Act
    const report = await repair(itemId);
    const afterRepair = await routes.order(itemId, buyers[1]!, 'repaired');

    // Assess
    expect([markedWithoutRoom.statusCode, body(markedWithoutRoom).error.code]).toEqual([403, 'PASS_REQUIRED']);
    expect(await redis().hget(itemKeys(itemId).state, 'room')).toBe('1');
    expect(await redis().hget(k.room, 'rate')).toBe('7');
    expect([afterRepair.statusCode, body(afterRepair).error?.code]).toEqual([403, 'PASS_REQUIRED']);
    expect(report).toMatchObject({ rebuilt: false, attachedRepaired: true });
  });

  it('drops a pass whose use it lost once MySQL holds the order, so passes outstanding stay within the units left', async () => {
    // Prepare: two units, both buyers holding a pass; then the first one's order is lost from
    // Redis (its pass back in the set, its unit back in the stock) after its hand-off was sent.
    const { itemId, pass } = await roomWithPass(2);
    expect((await routes.join(itemId, buyers[1]!)).statusCode).toBe(201);
    expect((await admittedClaim(routes, itemId, buyers[1]!)).statusCode).toBe(200);
    const undo = await checkpoint(`{item:${itemId}}`);
    const { record } = await reserve({ itemId, userId: buyers[0]!.id, quantity: 1, idempotencyKey: 'spent', source: LOCAL_SOURCE, pass });
    await undo();
    const lost = await passesAndUnits(itemId);
    const handOff = fixture<SQSEvent>('sqs/order-records.json').Records[0]!;

    // Act: the writer stores the order, finds Redis lost it, and repairs the item at once.
    const written = await writeReservations(
      { Records: [{ ...handOff, messageId: 'spent', body: encodeHandOffs([{ kind: 'orders', record }]) }] },
      lambdaContext(),
    );
    const repaired = await passesAndUnits(itemId);
    const again = await routes.order(itemId, buyers[0]!, 'spent-again', pass);

    // Assess
    expect(lost).toEqual({ outstanding: 2, units: 2 });
    expect(written.batchItemFailures).toEqual([]);
    expect(await sql('SELECT status FROM orders WHERE id = ?', [record.orderId])).toEqual([{ status: 'confirmed' }]);
    expect(repaired).toEqual({ outstanding: 1, units: 1 });
    expect([again.statusCode, body(again).error?.code]).toEqual([403, 'PASS_REQUIRED']);
  });
});

describe('DELETE /items/{itemId}/waiting-room', () => {
  it('removes the room for an admin only: orders need no pass from then on, and no repair brings it back', async () => {
    // Prepare
    const { itemId } = await roomWithPass(5);

    // Act
    const byBuyer = await routes.remove(itemId, buyers[1]!);
    const removed = await routes.remove(itemId, admin);
    const again = await routes.remove(itemId, admin);
    const report = await repair(itemId);
    const withoutPass = await routes.order(itemId, buyers[1]!, 'no-room');
    const joined = await routes.join(itemId, buyers[0]!);

    // Assess
    expect(byBuyer.statusCode).toBe(403);
    expect(removed.statusCode).toBe(204);
    expect([again.statusCode, body(again).error.code]).toEqual([404, 'NOT_FOUND']);
    expect(report).toMatchObject({ attachedRepaired: false });
    const k = roomKeys(itemId);
    expect(await redis().exists(k.room, k.queue, k.passes, k.turns, k.claimed, k.waiters)).toBe(0);
    expect(await redis().hget(itemKeys(itemId).state, 'room')).toBeNull();
    expect(withoutPass.statusCode).toBe(202);
    expect([joined.statusCode, body(joined).error.code]).toEqual([404, 'NOT_FOUND']);
  });
});

describe('PUT, DELETE and the repair of one room at once', () => {
  /** What MySQL and Redis hold of the room: its row, its hash, its mark. */
  async function heldOf(itemId: string): Promise<{ row: boolean; room: boolean; mark: boolean }> {
    const rows = await sql('SELECT item_id FROM waiting_rooms WHERE item_id = ?', [itemId]);
    return {
      row: rows.length === 1,
      room: (await redis().exists(roomKeys(itemId).room)) === 1,
      mark: (await redis().hget(itemKeys(itemId).state, 'room')) === '1',
    };
  }
  const WHOLE = { row: true, room: true, mark: true };
  const NONE = { row: false, room: false, mark: false };

  /** An item on sale in MySQL and Redis behind a room: its settings, the same for every PUT of it (an opened room's opening cannot change). */
  async function itemWithRoom(): Promise<{ itemId: string; settings: unknown }> {
    const itemId = uniqueItemId('room-race');
    await upsertItemStock(itemId, 5, 1);
    await openSale(itemId, 5, 1);
    const settings = openRoom({ admitPerSecond: 7 });
    expect((await routes.put(itemId, admin, settings)).statusCode).toBe(200);
    return { itemId, settings };
  }

  it('leaves a whole room or none, never a mark alone, however PUT and DELETE interleave', async () => {
    // Prepare
    const { itemId, settings } = await itemWithRoom();
    const outcomes: string[] = [];

    // Act: each round a PUT and a DELETE at once, the PUT a step ahead or behind.
    for (let round = 0; round < 20; round++) {
      const put = () => routes.put(itemId, admin, settings);
      const remove = () => routes.remove(itemId, admin);
      const answers = await Promise.all(round % 2 ? [put(), remove()] : [remove(), put()]);
      const held = await heldOf(itemId);
      outcomes.push(`${answers.map((a) => `${a.statusCode}${a.statusCode! >= 400 ? ` ${body(a).error.code}` : ''}`).join('/')} ${JSON.stringify(held)}`);
    }

    // Assess
    expect(outcomes.filter((o) => !o.endsWith(JSON.stringify(WHOLE)) && !o.endsWith(JSON.stringify(NONE)))).toEqual([]);
    expect(outcomes.filter((o) => !/^(200|204|404 NOT_FOUND)\/(200|204|404 NOT_FOUND) /.test(o))).toEqual([]);
  });

  it('never puts back a room a DELETE removed while the repair ran, and clears a mark MySQL has no room for', async () => {
    // Prepare
    const outcomes: string[] = [];

    // Act: each round a fresh room, then its repair and its DELETE at once.
    for (let round = 0; round < 10; round++) {
      const { itemId } = await itemWithRoom();
      await Promise.all(round % 2 ? [repairRoom(itemId, 1, []), routes.remove(itemId, admin)] : [routes.remove(itemId, admin), repairRoom(itemId, 1, [])]);
      outcomes.push(JSON.stringify(await heldOf(itemId)));
    }
    const orphan = uniqueItemId('room-orphan');
    await upsertItemStock(orphan, 5, 1);
    await openSale(orphan, 5, 1);
    await redis().hset(itemKeys(orphan).state, 'room', '1');
    const cleared = await repairRoom(orphan, 1, []);

    // Assess
    expect(outcomes).toEqual(Array(10).fill(JSON.stringify(NONE)));
    expect(cleared).toBe(true);
    expect(await heldOf(orphan)).toEqual(NONE);
  });
});
