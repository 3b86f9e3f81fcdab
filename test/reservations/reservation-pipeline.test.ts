import { PurgeQueueCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { redis } from '../../shared/platform/clients/redis';
import { handOffMessage } from '../../shared/reservations/hand-off';
import { kinds } from '../../shared/sale/kinds';

const HandOffMessage = handOffMessage(kinds);
import { decideFirst } from '../../shared/reservations/ledger';
import { compensate, handOff } from '../../shared/reservations/place';
import { reconcileOwner } from '../../shared/reservations/reconcile';
import { writeReservations } from '../../shared/reservations/writer';
import { checkpoint } from '../support/lost-writes';
import { kindsUnderTest, ledgerStates } from '../support/reservations';
import { depth, ownReservationQueue, testSqs } from '../support/queues';
import { until } from '../../shared/platform/wait';
import { keysMatching } from '../support/redis-nodes';

const sqs = testSqs();
const queue = await ownReservationQueue(sqs);
const look = { relayOlderThanMs: Number.POSITIVE_INFINITY, repair: false };
const repair = { ...look, repair: true };

/** The pipeline, once per kind: a façade over two copies of it could not pass both. */
describe.each(kindsUnderTest)('the reservation pipeline for $name', (t) => {
  const { kind } = t;
  /** The first bucket's state (the owner's own, when it is not split), where a test makes Redis drift. */
  const firstState = async (owner: string) => (await kind.bucketsOf(owner))[0]!.state;
  const outboxLength = async (owner: string) =>
    (await Promise.all((await kind.bucketsOf(owner)).map((b) => redis().hlen(b.outbox)))).reduce((a, b) => a + b, 0);
  const idOf = (reserved: { record: unknown }) => kind.idOf(reserved.record);
  /** The owner's reservations of this kind in the messages the queue holds now (other tests' may be there too). */
  const queuedFor = async (owner: string) => {
    const { Messages } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queue.url, MaxNumberOfMessages: 10, WaitTimeSeconds: 2 }));
    return (Messages ?? []).flatMap((m) => HandOffMessage.parse(JSON.parse(m.Body!))[kind.name] as unknown[]).filter((r) => kind.ownerOf(r) === owner);
  };

  describe('writer', () => {
    it('stores a batch once, even when it comes twice', async () => {
      const owner = await t.open(5);
      const reserved = [await t.reserve(owner, 1), await t.reserve(owner, 2), await t.reserve(owner, 3)].map((r) => r.record);

      await writeReservations(kind, [...reserved, ...reserved]);
      await writeReservations(kind, reserved);

      expect((await t.rows(owner)).map((r) => r.id)).toEqual(reserved.map(kind.idOf).sort());
      expect(Object.values(await ledgerStates(owner))).toEqual(['confirmed', 'confirmed', 'confirmed']);
      expect(await outboxLength(owner)).toBe(0);
    });

    it('stores a reservation whose Redis writes were lost, and repairs its owner at once, so no unit is sold twice', async () => {
      // Prepare: a unit of two reserved and acknowledged, then lost by Redis.
      const owner = await t.open(2);
      const undo = await checkpoint(t.tags(owner));
      const lost = await t.reserve(owner, 1);
      await undo();

      // Act
      const result = await writeReservations(kind, [lost.record]);
      const lostBuyerAgain = await t.reserve(owner, 1).catch((error: { code: string }) => error.code);
      const second = await t.reserve(owner, 2);
      const third = await t.reserve(owner, 3).catch((error: { code: string }) => error.code);

      // Assess
      expect(result.storedWithoutOutbox).toBe(1);
      expect((await t.rows(owner)).map((r) => r.id)).toEqual([idOf(lost)]);
      expect(second.replayed).toBe(false);
      expect(third).toBe('SOLD_OUT');
      expect(lostBuyerAgain === 'LIMIT_EXCEEDED' || (typeof lostBuyerAgain === 'object' && lostBuyerAgain.replayed)).toBe(true);
    });

    it('repairs an owner on its first batch after a reconnect, when a failover lost reservations it had already stored', async () => {
      // Prepare: a reservation stored and cleared from the outbox; then Redis loses all of it (a
      // replica promoted that never got those writes), and the writer's connection is made again.
      const owner = await t.open(3);
      const undo = await checkpoint(t.tags(owner));
      const stored = await t.reserve(owner, 1);
      await writeReservations(kind, [stored.record]);
      await undo();
      const ready = new Promise((resolve) => redis().once('ready', resolve));
      redis().disconnect(true);
      await ready;

      // Act: the next batch, with nothing missing from the outbox.
      const next = await t.reserve(owner, 2);
      const result = await writeReservations(kind, [next.record]);

      // Assess: the unit Redis gave back is taken again, so it is not sold twice.
      expect(result.storedWithoutOutbox).toBe(0);
      expect(await reconcileOwner(kind, owner, look)).toMatchObject({ remaining: 1, confirmed: 2, drift: 0 });
    });

    it('rejects what would go past the capacity MySQL holds, whatever Redis let through', async () => {
      const owner = await t.open(2);
      const state = await firstState(owner);
      await redis().hincrby(state, kind.counter.field, kind.counter.sign);
      const reserved = [await t.reserve(owner, 1), await t.reserve(owner, 2), await t.reserve(owner, 3)].map((r) => r.record);

      await writeReservations(kind, reserved);

      expect((await t.rows(owner)).filter((r) => r.confirmed)).toHaveLength(2);
      expect(Object.values(await ledgerStates(owner)).sort()).toEqual(['confirmed', 'confirmed', 'rejected']);
    });
  });

  describe('compensation', () => {
    it('cancels in the ledger before giving the units back, so a late message is dropped even if Redis loses the release', async () => {
      // Prepare
      const owner = await t.open(3);
      const reserved = await t.reserve(owner, 1);
      const undo = await checkpoint(t.tags(owner));

      // Act: the hand-off failed; Redis then loses the release; the message arrives after all.
      const cancelled = await compensate(kind, reserved.record);
      await undo();
      await writeReservations(kind, [reserved.record]);

      // Assess: nothing stored, and the units given back again (by the writer's look at the owner).
      expect(cancelled).toBe(true);
      expect(await t.rows(owner)).toEqual([]);
      expect(await ledgerStates(owner)).toEqual({ [idOf(reserved)]: 'cancelled' });
      expect(await reconcileOwner(kind, owner, look)).toMatchObject({ remaining: 3, pending: 0, drift: 0 });
    });

    it('is finished by reconciliation when it died between the ledger and Redis', async () => {
      const owner = await t.open(3);
      const reserved = await t.reserve(owner, 1);
      await decideFirst(kind.decisions, reserved.record, 'cancelled');

      const reconciled = await reconcileOwner(kind, owner, look);

      expect(reconciled).toMatchObject({ released: 1, drift: 0 });
      expect(await reconcileOwner(kind, owner, look)).toMatchObject({ remaining: 3, pending: 0, drift: 0 });
    });

    it('keeps a reservation a retry was told stands, even if its first request then fails to send', async () => {
      const owner = await t.open(3);
      const first = await t.reserve(owner, 1);
      const retry = await t.reserve(owner, 1);

      await handOff(kind, retry);
      const cancelled = await compensate(kind, first.record);
      await writeReservations(kind, [first.record]);

      expect(retry).toMatchObject({ replayed: true, pending: true });
      expect(cancelled).toBe(false);
      expect((await t.rows(owner)).map((r) => r.id)).toEqual([idOf(first)]);
    });

    it('hands a reservation a retry was told stands to the queue itself, so it is stored though its first request never sent it and Redis then lost it', async () => {
      // Prepare: the first request reserved, then lost Redis's answer (a command timeout) before
      // its hand-off: only the outbox has the reservation, for the relay to send some time later.
      const owner = await t.open(3);
      const undo = await checkpoint(t.tags(owner));
      const first = await t.reserve(owner, 1);
      const retry = await t.reserve(owner, 1);

      // Act: the retry is told it stands; then Redis loses every write of it, its outbox entry
      // included (a failover), before any relay; the writer stores what the queue holds.
      await handOff(kind, retry);
      await undo();
      await writeReservations(kind, await queuedFor(owner));

      // Assess
      expect(retry).toMatchObject({ replayed: true, pending: true });
      expect(await outboxLength(owner)).toBe(0);
      expect((await t.rows(owner)).map((r) => r.id)).toEqual([idOf(first)]);
    });

    it('answers a retry of a cancelled reservation 503, after giving it back, when Redis lost the release', async () => {
      const owner = await t.open(3);
      const first = await t.reserve(owner, 1);
      const undo = await checkpoint(t.tags(owner));
      await compensate(kind, first.record);
      await undo();

      const retry = await t.reserve(owner, 1);
      const answer = await handOff(kind, retry).catch((error: { status: number }) => error.status);
      const anew = await t.reserve(owner, 1);

      expect(retry).toMatchObject({ replayed: true, pending: true });
      expect(answer).toBe(503);
      expect(anew.replayed).toBe(false);
      expect(idOf(anew)).not.toBe(idOf(first));
    });
  });

  describe('reconciliation', () => {
    it('finds no drift when every unit is remaining, confirmed or pending', async () => {
      const owner = await t.open(10);
      const reserved = [await t.reserve(owner, 1), await t.reserve(owner, 2), await t.reserve(owner, 3)];
      await writeReservations(
        kind,
        reserved.slice(0, 2).map((r) => r.record),
      );

      expect(await reconcileOwner(kind, owner, look)).toMatchObject({ capacity: 10, remaining: 7, confirmed: 2, pending: 1, drift: 0, relayed: 0 });
    });

    it('relays a reservation whose send was lost, so the writer stores it', async () => {
      const owner = await t.open(10);
      const reserved = await t.reserve(owner, 1);

      const result = await reconcileOwner(kind, owner, { ...look, relayOlderThanMs: 0 });
      const relayed = await queuedFor(owner);
      await writeReservations(kind, relayed);

      expect(result).toMatchObject({ relayed: 1, drift: 0 });
      expect(relayed.map(kind.idOf)).toEqual([idOf(reserved)]);
      expect(await reconcileOwner(kind, owner, look)).toMatchObject({ confirmed: 1, pending: 0, drift: 0 });
    });

    it('moves a drifted counter by its drift, once, however many repairs run at the same time', async () => {
      const owner = await t.open(10);
      await t.reserve(owner, 1);
      await redis().hincrby(await firstState(owner), kind.counter.field, 3 * kind.counter.sign);

      const seen = await reconcileOwner(kind, owner, look);
      const repairs = await Promise.all([reconcileOwner(kind, owner, repair), reconcileOwner(kind, owner, repair), reconcileOwner(kind, owner, repair)]);

      expect(seen).toMatchObject({ remaining: 12, pending: 1, drift: -3, adjusted: 0 });
      expect(repairs.map((r) => r!.adjusted).sort()).toEqual([-3, 0, 0]);
      expect(await reconcileOwner(kind, owner, look)).toMatchObject({ remaining: 9, drift: 0 });
    });

    it('rebuilds an owner Redis lost whole, once nothing is in flight, and puts its buyers back', async () => {
      // Prepare: one stored, then Redis loses every key of the owner, with one message still queued.
      const owner = await t.open(5);
      const stored = await t.reserve(owner, 1);
      await writeReservations(kind, [stored.record]);
      for (const tag of t.tags(owner)) await redis().del(...(await keysMatching(`${tag.replace(/[{}]/g, '\\$&')}*`)));
      await sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: '{}' }));

      // Act
      const refused = await reconcileOwner(kind, owner, repair);
      await sqs.send(new PurgeQueueCommand({ QueueUrl: queue.url }));
      await until(async () => (await depth(sqs, queue.url)) === 0, 60_000, 'queue empty');
      const rebuilt = await reconcileOwner(kind, owner, repair);
      const sameBuyer = await t.reserve(owner, 1).catch((error: { code: string }) => error.code);

      // Assess
      expect(refused).toMatchObject({ rebuilt: false, waiting: expect.stringContaining('in flight') });
      expect(rebuilt).toMatchObject({ rebuilt: true, buyersRestored: 1 });
      expect(await reconcileOwner(kind, owner, look)).toMatchObject({ remaining: 4, confirmed: 1, drift: 0 });
      expect(sameBuyer === 'LIMIT_EXCEEDED' || (typeof sameBuyer === 'object' && sameBuyer.replayed)).toBe(true);
      expect((await t.reserve(owner, 2)).replayed).toBe(false);
    });
  });
});
