/**
 * A waiting room that Redis lost (a failover under asynchronous replication, an AOF restart) is
 * put back from MySQL by the repair that rebuilds the sale: the sale never comes back open.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { redis } from '../../shared/platform/clients/redis';
import { upsertItemStock } from '../../shared/orders/items';
import { orders } from '../../shared/orders/kind';
import { itemKeys } from '../../shared/orders/model';
import { openSale } from '../../shared/orders/sale';
import { roomKeys } from '../../shared/rooms/model';
import { reconcileOwner } from '../../shared/reservations/reconcile';
import { uniqueItemId } from '../support/orders';
import { ownReservationQueue, testSqs } from '../support/queues';
import { keysMatching } from '../support/redis-nodes';
import { admittedClaim, body, openRoom, roomRoutes } from '../support/rooms';
import { signedInUsers, type SignedInUser } from '../support/sessions';

const routes = await roomRoutes();
await ownReservationQueue(testSqs());

let admin: SignedInUser;
let buyers: SignedInUser[];

beforeAll(async () => {
  admin = (await signedInUsers(1, 'admin'))[0]!;
  buyers = await signedInUsers(2);
});

const repair = (itemId: string) => reconcileOwner(orders, itemId, { relayOlderThanMs: Number.POSITIVE_INFINITY, repair: true, oneLook: true });

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
    expect(report).toMatchObject({ rebuilt: true, attachedRestored: true });
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
    expect(report).toMatchObject({ rebuilt: false, attachedRestored: true });
  });
});
