import { randomUUID } from 'node:crypto';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoAccounts } from '../../infra/twin/seed';
import { startTwin, type Twin } from '../../infra/twin/twin';
import { reserve } from '../../shared/sale/orders/sale';
import { receiveAndSend } from '../../shared/platform/queue/redrive';
import { encodeHandOffs } from '../../shared/reservations/hand-off';
import { signedIn, surgeClient, type SurgeClient } from '../../infra/client/client';
import { depth, testSqs } from '../support/queues';
import { captureLog, loggedDecision, type CapturedLog } from '../support/logs';
import { LOCAL_SOURCE } from '../../infra/twin/load-test-sources';
import { until } from '../../shared/platform/wait';

/** The operator's and load tester's endpoints and tools, against a twin whose writer runs in this process (its log lines are this process's). */
describe('load tests and operations against the twin', () => {
  let twin: Twin;
  let admin: SurgeClient;
  /** The API as the holder of this session calls it; without one, as anyone. */
  const as = (cookie?: string) => surgeClient(twin.url, cookie ? { cookie } : {});
  const signIn = async (role: 'user' | 'admin') => {
    const { email, password } = demoAccounts.find((a) => a.role === role)!;
    return (await signedIn(twin.url, { email, password })).client;
  };
  /** Buyers made by the load-test route, each with a client signed in as them. */
  const buyers = async (count: number) =>
    (await admin.POST('/admin/load-tests/buyers', { body: { count } })).data!.buyers.map((b) => ({ ...b, client: as(b.cookie) }));
  const fresh = (what: string) => `${what}-${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    twin = await startTwin({
      port: 0,
      smtpPort: 0,
      stateDir: '.local/test-operations',
      database: 'surge_test_operations',
      consumers: 'in-process',
      queuePrefix: 'operations-',
    });
    admin = await signIn('admin');
  });
  afterAll(() => twin?.stop());

  describe('POST /admin/load-tests/buyers', () => {
    it('makes distinct buyers, each signed in by the cookie it returns', async () => {
      // Act
      const answer = await admin.POST('/admin/load-tests/buyers', { body: { count: 1_200 } });

      // Assess
      expect(answer.response.status).toBe(201);
      const made = answer.data!.buyers;
      expect(made).toHaveLength(1_200);
      expect(new Set(made.map((b) => b.userId)).size).toBe(1_200);
      for (const buyer of [made[0]!, made[999]!, made[1_199]!]) {
        const me = await as(buyer.cookie).GET('/me');
        expect(me.response.status).toBe(200);
        expect(me.data).toMatchObject({ id: buyer.userId, role: 'user' });
      }
    });

    it('is for admins only, and takes 1 to 5,000 buyers', async () => {
      const user = await signIn('user');

      const anonymous = await as().POST('/admin/load-tests/buyers', { body: { count: 1 } });
      const notAdmin = await user.POST('/admin/load-tests/buyers', { body: { count: 1 } });
      const tooMany = await admin.POST('/admin/load-tests/buyers', { body: { count: 5_001 } });
      const none = await admin.POST('/admin/load-tests/buyers', { body: { count: 0 } });

      expect([anonymous, notAdmin, tooMany, none].map((answer) => answer.response.status)).toEqual([401, 403, 400, 400]);
      expect(tooMany.error).toMatchObject({ error: { code: 'VALIDATION_FAILED' } });
    });
  });

  describe('POST /admin/audit/…', () => {
    const auditItem = (itemId: string, accepted: string[] = []) =>
      admin.POST('/admin/audit/items/{itemId}', { params: { path: { itemId } }, body: { accepted } });
    const auditDeal = (dealId: string, accepted: string[] = []) =>
      admin.POST('/admin/audit/deals/{dealId}', { params: { path: { dealId } }, body: { accepted } });
    const drained = (audit: () => Promise<{ data?: { pending: number } }>) =>
      until(async () => (await audit()).data?.pending === 0, 60_000, 'the writer drained');

    it('holds a sale against the orders it accepted, and names an accepted order it has no row for', async () => {
      // Prepare: 150 buyers race for 100 units, one order each.
      const itemId = fresh('audit');
      await admin.PUT('/items/{itemId}/stock', { params: { path: { itemId } }, body: { quantity: 100, perUserLimit: 1 } });
      const crowd = await buyers(150);
      const answers = await Promise.all(
        crowd.map((b) =>
          b.client.POST('/items/{itemId}/orders', { params: { path: { itemId }, header: { 'idempotency-key': randomUUID() } }, body: { quantity: 1 } }),
        ),
      );
      const accepted = answers.flatMap((a) => (a.data ? [a.data.orderId] : []));
      await drained(() => auditItem(itemId));
      const neverStored = `${itemId}.${'0'.repeat(9)}${'a'.repeat(14)}`;

      // Act
      const audit = await auditItem(itemId, accepted);
      const withAStranger = await auditItem(itemId, [...accepted.slice(0, 10), neverStored]);

      // Assess
      expect(answers.map((a) => a.response.status).sort()).toEqual([...Array(100).fill(202), ...Array(50).fill(409)]);
      expect(audit.response.status).toBe(200);
      expect(audit.data).toMatchObject({
        capacity: 100,
        final_stock: 0,
        pending: 0,
        drift: 0,
        rows: 100,
        confirmed: 100,
        oversold: 0,
        duplicates: 0,
        accepted: 100,
        lost: 0,
        rejected: 0,
      });
      expect(withAStranger.data).toMatchObject({ accepted: 11, lost: 1, lost_ids: [neverStored] });
    });

    it('holds a deal against the coupons it issued', async () => {
      // Prepare: 30 users ask for 20 coupons.
      const dealId = fresh('audit');
      const now = Date.now();
      await admin.PUT('/deals/{dealId}', {
        params: { path: { dealId } },
        body: { title: 'Audit', opensAt: new Date(now - 1_000).toISOString(), closesAt: new Date(now + 3_600_000).toISOString(), limit: 20 },
      });
      const crowd = await buyers(30);
      const answers = await Promise.all(crowd.map((b) => b.client.POST('/deals/{dealId}/coupons', { params: { path: { dealId } } })));
      const issued = answers.flatMap((a) => (a.data ? [a.data.couponId] : []));
      await drained(() => auditDeal(dealId));

      // Act
      const audit = await auditDeal(dealId, issued);

      // Assess
      expect(issued).toHaveLength(20);
      expect(audit.data).toMatchObject({ capacity: 20, final_stock: 0, pending: 0, rows: 20, oversold: 0, duplicates: 0, accepted: 20, lost: 0 });
    });

    it('answers 404 for an owner MySQL does not know, and is for admins only', async () => {
      const unknown = await auditItem(fresh('none'));
      const notAdmin = await (await signIn('user')).POST('/admin/audit/items/{itemId}', { params: { path: { itemId: fresh('none') } }, body: {} });

      expect([unknown.response.status, notAdmin.response.status]).toEqual([404, 403]);
    });
  });

  describe('npm run redrive (receive-and-send, as in the twin)', () => {
    it('moves a dead-lettered hand-off back to the queue, where the writer stores it', async () => {
      // Prepare: a reservation whose message ran out of receives and sits in the DLQ.
      const sqs = testSqs(twin.emulatorUrl);
      const { reservations } = twin.queues;
      const itemId = fresh('redrive');
      await admin.PUT('/items/{itemId}/stock', { params: { path: { itemId } }, body: { quantity: 5, perUserLimit: 1 } });
      const [buyer] = await buyers(1);
      const { record } = await reserve({ itemId, userId: buyer!.userId, quantity: 1, idempotencyKey: randomUUID(), source: LOCAL_SOURCE });
      await sqs.send(new SendMessageCommand({ QueueUrl: reservations.deadLetterUrl, MessageBody: encodeHandOffs([{ kind: 'orders', record }]) }));
      const order = () => buyer!.client.GET('/orders/{orderId}', { params: { path: { orderId: record.orderId } } });
      const before = await order();

      // Act
      const result = await receiveAndSend(sqs, { deadLetter: { url: reservations.deadLetterUrl, arn: '' }, queue: reservations });

      // Assess
      expect(before.data?.status).toBe('pending');
      expect(result).toEqual({ moved: 1, how: 'receive-and-send' });
      expect(await depth(sqs, reservations.deadLetterUrl)).toBe(0);
      await until(async () => (await order()).data?.status === 'confirmed', 60_000, 'the order stored');
    });
  });

  describe('the correlation id', () => {
    let log: CapturedLog;
    // The suite logs only what is critical; this test reads the writer's info lines.
    beforeAll(() => {
      log = captureLog();
    });
    afterAll(() => log.stop());

    /** The correlation id the writer logged for a reservation, once it has decided it. */
    const loggedCorrelationId = async (id: string) => {
      await until(async () => loggedDecision(log.lines(), id) !== undefined, 60_000, `the writer's decision of ${id}`);
      return loggedDecision(log.lines(), id)!.correlationId;
    };

    it('travels from the request through the queue to the writer’s log line: the caller’s when valid, else the request id', async () => {
      // Prepare
      const itemId = fresh('correlation');
      await admin.PUT('/items/{itemId}/stock', { params: { path: { itemId } }, body: { quantity: 5, perUserLimit: 1 } });
      const [given, garbled, none] = await buyers(3);
      const correlationId = `checkout-${randomUUID()}`;
      // X-Correlation-Id is not among the parameters the document declares: sent as a plain header.
      const order = (buyer: SurgeClient, headers: Record<string, string> = {}) =>
        buyer.POST('/items/{itemId}/orders', { params: { path: { itemId }, header: { 'idempotency-key': randomUUID() } }, headers, body: { quantity: 1 } });

      // Act
      const named = await order(given!.client, { 'x-correlation-id': correlationId });
      const refused = await order(garbled!.client, { 'x-correlation-id': 'not valid; has spaces' });
      const unnamed = await order(none!.client);

      // Assess
      expect([named, refused, unnamed].map((answer) => answer.response.status)).toEqual([202, 202, 202]);
      expect(await loggedCorrelationId(named.data!.orderId)).toBe(correlationId);
      const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
      expect(await loggedCorrelationId(refused.data!.orderId)).toMatch(uuid);
      expect(await loggedCorrelationId(unnamed.data!.orderId)).toMatch(uuid);
    });
  });
});
