import { createServer, type Server } from 'node:http';
import { SetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyStructuredResultV2, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redis } from '../../shared/platform/clients/redis';
import { upsertItemStock } from '../../shared/sale/orders/items';
import { itemKeys, type OrderRecord } from '../../shared/sale/orders/model';
import { openSale, remainingStock, reserve } from '../../shared/sale/orders/sale';
import { orderDecisions, orders } from '../../shared/sale/orders/kind';
import { decideFirst } from '../../shared/reservations/ledger';
import { handOff } from '../../shared/reservations/place';
import { LOCAL_SOURCE } from '../../infra/twin/load-test-sources';
import { lambdaContext } from '../support/events';
import { orderEvent } from '../support/order-events';
import { orderRows, uniqueItemId } from '../support/orders';
import { depth, ownReservationQueue, pollQueue, testSqs } from '../support/queues';
import { signedInUsers } from '../support/sessions';
import { until } from '../../shared/platform/wait';
import { handler as writeReservations } from '../../functions/write-reservations';
import { keysMatching } from '../support/redis-nodes';
import { route } from '../support/routes';

const createOrder = await route('create-order');

/**
 * Faults of the hand-off that the emulator cannot produce itself, made by a proxy in front of it:
 * 'down' drops every connection (the queue is unreachable); 'late' forwards the send, so the
 * message does arrive, but answers only after the sender has given up (an unknown outcome).
 */
let mode: 'down' | 'late' = 'down';
const emulator = process.env.AWS_ENDPOINT_URL!;
// The test itself (and the writer) reach the emulator directly, never through the faulty proxy.
const sqs = testSqs(emulator);
const proxy: Server = createServer(async (req, res) => {
  if (mode === 'down') return req.socket.destroy();
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'content-length')) as Record<string, string>;
  const upstream = await fetch(`${emulator}${req.url}`, { method: req.method, headers, body: Buffer.concat(chunks) });
  const reply = Buffer.from(await upstream.arrayBuffer());
  // Past the sender's 3 s on any machine: its clock started before the request reached here.
  setTimeout(() => {
    if (res.destroyed) return;
    res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
    res.end(reply);
  }, 4_000);
});
await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
const address = proxy.address();
process.env.AWS_ENDPOINT_URL = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

const queue = await ownReservationQueue(sqs);

const body = (r: APIGatewayProxyStructuredResultV2) => JSON.parse(r.body ?? 'null');

async function openItem(stock: number) {
  const itemId = uniqueItemId('handoff');
  await upsertItemStock(itemId, stock, 1);
  await openSale(itemId, stock, 1);
  return itemId;
}

async function redisState(itemId: string) {
  const keys = itemKeys(itemId);
  return {
    stock: await remainingStock(itemId),
    bought: await redis().hlen(keys.buyers),
    pending: await redis().hlen(keys.outbox),
    idempotency: (await keysMatching(`{item:${itemId}}:idem:*`)).length,
  };
}

describe('the hand-off to the order queue', () => {
  afterAll(() => new Promise<void>((resolve) => proxy.close(() => resolve())));

  describe('when the queue is unreachable', () => {
    beforeAll(() => {
      mode = 'down';
    });

    it('restores the stock and answers 503, so a retry with the same key can succeed', async () => {
      const itemId = await openItem(5);
      const [buyer] = await signedInUsers(1);

      const result = await createOrder(orderEvent(itemId, buyer!.cookie, 'retry-me', { quantity: 1 }), lambdaContext());

      expect(result.statusCode).toBe(503);
      expect(body(result).error.code).toBe('UNAVAILABLE');
      expect(await redisState(itemId)).toEqual({ stock: 5, bought: 0, pending: 0, idempotency: 0 });
    });

    it('answers 503, not 202, when a concurrent retry promised the order first: its own send failed, and the retry sends it', async () => {
      // Prepare: a reservation whose retry, concurrent with it, already promised it in MySQL.
      const itemId = await openItem(5);
      const reservation = await reserve({ itemId, userId: 7_007, quantity: 1, idempotencyKey: 'promised-first', source: LOCAL_SOURCE });
      expect(await decideFirst(orderDecisions, reservation.record, 'promised')).toBe('promised');

      // Act
      const handedOff = await handOff(orders, reservation).then(
        () => 'stands',
        (error: Error) => error.constructor.name,
      );

      // Assess: told to retry; the promise stands, so the reservation is not given back.
      expect(handedOff).toBe('UnavailableError');
      expect((await redisState(itemId)).stock).toBe(4);
    });

    it('gives the buyer back the waiting-room pass the order used, for the retry it is told to make', async () => {
      // Prepare: an item behind a room, and the buyer's live pass, as a claim leaves them.
      const itemId = await openItem(5);
      const [buyer] = await signedInUsers(1);
      const keys = itemKeys(itemId);
      const member = `${buyer!.id}:AAAAAAAAAAAAAAAAAAAAAA`;
      const expiresAt = Date.now() + 60_000;
      await redis().hset(keys.state, 'room', 1);
      await redis().zadd(keys.passes, expiresAt, member);
      const event = orderEvent(itemId, buyer!.cookie, 'with-pass', { quantity: 1 });
      event.headers['waiting-room-pass'] = 'AAAAAAAAAAAAAAAAAAAAAA';

      // Act
      const result = await createOrder(event, lambdaContext());

      // Assess
      expect(result.statusCode).toBe(503);
      expect(Number(await redis().zscore(keys.passes, member))).toBe(expiresAt);
      expect(await remainingStock(itemId)).toBe(5);
    });

    it('stamps the sale with the failure, by which a waiting room holds its admission', async () => {
      // Prepare
      const itemId = await openItem(5);
      const [buyer] = await signedInUsers(1);
      const before = Date.now();

      // Act
      const result = await createOrder(orderEvent(itemId, buyer!.cookie, 'stamped', { quantity: 1 }), lambdaContext());

      // Assess
      expect(result.statusCode).toBe(503);
      expect(Number(await redis().hget(itemKeys(itemId).state, 'handOffFailedAt'))).toBeGreaterThanOrEqual(before);
    });
  });

  describe('when a send times out but its message arrives anyway', () => {
    beforeAll(() => {
      mode = 'late';
    });

    it('compensates, and the writer drops the late message instead of writing it', async () => {
      // Prepare
      const itemId = await openItem(5);
      const [buyer] = await signedInUsers(1);

      // Act
      const result = await createOrder(orderEvent(itemId, buyer!.cookie, 'late', { quantity: 1 }), lambdaContext());
      await until(async () => (await depth(sqs, queue.url)) === 1, 60_000, 'late message arrived');
      const poller = pollQueue(sqs, queue, (event: SQSEvent) => writeReservations(event, lambdaContext()));
      await until(async () => poller.invocations >= 1, 60_000, 'writer ran');
      await poller.stop();

      // Assess
      expect(result.statusCode).toBe(503);
      expect(await redisState(itemId)).toEqual({ stock: 5, bought: 0, pending: 0, idempotency: 0 });
      expect(await orderRows(itemId)).toEqual([]);
    });

    it('drops the late message even when Redis then loses the release (the cancellation is kept in MySQL)', async () => {
      // Prepare: a compensated order whose message arrives late. The poller of the test before may
      // still hold a receive open, which takes the message out of sight for the visibility timeout.
      await sqs.send(new SetQueueAttributesCommand({ QueueUrl: queue.url, Attributes: { VisibilityTimeout: '2' } }));
      const itemId = await openItem(5);
      const [buyer] = await signedInUsers(1);
      const result = await createOrder(orderEvent(itemId, buyer!.cookie, 'lost-release', { quantity: 1 }), lambdaContext());
      // The release leaves a record named after the order; the writer reads the message, not the outbox copy.
      const [releasedKey] = await keysMatching(`{item:${itemId}}:released:*`);
      const order: OrderRecord = { orderId: releasedKey!.split(':released:')[1]!, itemId, userId: buyer!.id, quantity: 1, reservedAt: Date.now() };

      // Act: Redis loses the release's writes (all of one script's, as a failover loses them), and the writer gets the message.
      const keys = itemKeys(itemId);
      await redis()
        .multi()
        .hincrby(keys.state, 'stock', -1)
        .hset(keys.buyers, String(buyer!.id), 1)
        .hset(keys.outbox, order.orderId, JSON.stringify(order))
        .set(keys.idempotency(buyer!.id, 'lost-release'), `q1|${order.orderId}|4`)
        .del(keys.released(order.orderId))
        .exec();
      const poller = pollQueue(sqs, queue, (event: SQSEvent) => writeReservations(event, lambdaContext()));
      await until(async () => (await depth(sqs, queue.url)) === 0, 60_000, 'writer ran');
      await poller.stop();

      // Assess: the client was told 503, so nothing may be stored.
      expect(result.statusCode).toBe(503);
      expect(await orderRows(itemId)).toEqual([]);
    });
  });
});
