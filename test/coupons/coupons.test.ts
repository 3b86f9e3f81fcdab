import { randomBytes } from 'node:crypto';
import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyStructuredResultV2, SQSEvent } from 'aws-lambda';
import type { RowDataPacket } from 'mysql2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Poller } from '../../infra/twin/events/poller';
import { redis } from '../../shared/platform/clients/redis';
import { LIMITS } from '../../shared/limits/limits';
import { issuedCount } from '../../shared/coupons/coupons';
import { coupons } from '../../shared/coupons/kind';
import { writeReservations as writeKind } from '../../shared/reservations/writer';
import { dealKeys, type CouponRecord } from '../../shared/coupons/model';
import { encodeHandOffs } from '../../shared/reservations/hand-off';
import { httpEvent, lambdaContext } from '../support/events';
import { sql } from '../support/orders';
import { depth, ownReservationQueue, pollQueue, testSqs } from '../support/queues';
import { signedInUsers, type SignedInUser } from '../support/sessions';
import { until } from '../../shared/platform/wait';
import { literalPattern } from '../support/keys';
import { handler as writeReservations } from '../../functions/write-reservations';
import { reconcileOwner } from '../../shared/reservations/reconcile';
import { keysMatching } from '../support/redis-nodes';
import { route } from '../support/routes';

const putDeal = await route('put-deal');
const getDeal = await route('get-deal');
const createCoupon = await route('create-coupon');
const listMyCoupons = await route('list-my-coupons');

const sqs = testSqs();
const queue = await ownReservationQueue(sqs);

type Result = APIGatewayProxyStructuredResultV2;
const body = (r: Result) => JSON.parse(r.body ?? 'null');
const HOUR = 3_600_000;

function dealRequest(dealId: string, cookie: string, payload: unknown) {
  return httpEvent('post-sessions', { method: 'PUT', path: `/deals/${dealId}`, pathParameters: { dealId }, cookies: [cookie], body: payload });
}

function couponRequest(dealId: string, cookie: string) {
  return httpEvent('get-me', { method: 'POST', path: `/deals/${dealId}/coupons`, pathParameters: { dealId }, cookies: [cookie] });
}

const couponRows = (dealId: string) => sql<RowDataPacket>('SELECT id, user_id FROM coupons WHERE deal_id = ?', [dealId]);

describe('time-deal coupons', () => {
  let admin: SignedInUser;
  let users: SignedInUser[];
  let poller: Poller;

  async function openDeal(limit: number, window: { opensAt?: number; closesAt?: number } = {}): Promise<string> {
    const dealId = `deal-${randomBytes(5).toString('hex')}`;
    const result = await putDeal(
      dealRequest(dealId, admin.cookie, {
        title: 'Half price',
        opensAt: new Date(window.opensAt ?? Date.now() - HOUR).toISOString(),
        closesAt: new Date(window.closesAt ?? Date.now() + HOUR).toISOString(),
        limit,
      }),
      lambdaContext(),
    );
    expect(result.statusCode).toBe(200);
    return dealId;
  }

  beforeAll(async () => {
    admin = (await signedInUsers(1, 'admin'))[0]!;
    users = await signedInUsers(900);
    poller = pollQueue(sqs, queue, (event: SQSEvent) => writeReservations(event, lambdaContext()), {
      maxConcurrency: 2,
      onError: (error) => console.error(error),
    });
  });
  afterAll(() => poller.stop());

  it('issues exactly 500 coupons to 900 users asking at once, one each, all stored', async () => {
    // Prepare
    const dealId = await openDeal(500);

    // Act
    const results = await Promise.all(users.map((u) => createCoupon(couponRequest(dealId, u.cookie), lambdaContext())));
    await until(async () => (await couponRows(dealId)).length === 500, 60_000, '500 coupon rows');

    // Assess
    const issued = results.filter((r) => r.statusCode === 201);
    const refused = results.filter((r) => r.statusCode === 409).map((r) => body(r).error.code);
    expect(issued).toHaveLength(500);
    expect(refused).toHaveLength(400);
    expect(new Set(refused)).toEqual(new Set(['SOLD_OUT']));
    const rows = await couponRows(dealId);
    expect(new Set(rows.map((r) => r.user_id)).size).toBe(500);
    expect(new Set(rows.map((r) => r.id))).toEqual(new Set(issued.map((r) => body(r).couponId)));
    expect(body(await getDeal(httpEvent('get-me', { path: `/deals/${dealId}`, pathParameters: { dealId } }), lambdaContext())).remaining).toBe(0);
    await until(async () => (await redis().hlen(dealKeys(dealId).outbox)) === 0, 60_000, 'outbox settled');
    expect(await reconcileOwner(coupons, dealId, { relayOlderThanMs: 60_000, repair: false })).toMatchObject({
      capacity: 500,
      remaining: 0,
      confirmed: 500,
      pending: 0,
      drift: 0,
    });
  });

  it('gives one user asking 50 times at once one coupon, names it to the asks its rate lets through, and 429s the rest', async () => {
    const dealId = await openDeal(10);
    const user = users[0]!;

    const results = await Promise.all(Array.from({ length: 50 }, () => createCoupon(couponRequest(dealId, user.cookie), lambdaContext())));

    const issued = results.filter((r) => r.statusCode === 201).map((r) => body(r).couponId);
    const repeats = results.filter((r) => r.statusCode === 409).map(body);
    const limited = results.filter((r) => r.statusCode === 429);
    expect(issued).toHaveLength(1);
    expect(repeats).toHaveLength(LIMITS.couponsPerUser.count - 1);
    expect(limited).toHaveLength(50 - LIMITS.couponsPerUser.count);
    for (const repeat of repeats) expect(repeat.error).toMatchObject({ code: 'ALREADY_ISSUED', details: { couponId: issued[0] } });
    for (const answer of limited) expect(answer.headers?.['retry-after']).toMatch(/^[1-9]\d*$/);
    expect(await issuedCount(dealId)).toBe(1);
  });

  it('refuses before the window opens and after it closes', async () => {
    const early = await openDeal(10, { opensAt: Date.now() + HOUR, closesAt: Date.now() + 2 * HOUR });
    const late = await openDeal(10, { opensAt: Date.now() - 2 * HOUR, closesAt: Date.now() - HOUR });

    const before = await createCoupon(couponRequest(early, users[1]!.cookie), lambdaContext());
    const after = await createCoupon(couponRequest(late, users[1]!.cookie), lambdaContext());

    expect([before.statusCode, body(before).error.code]).toEqual([409, 'NOT_OPEN']);
    expect([after.statusCode, body(after).error.code]).toEqual([409, 'CLOSED']);
    expect(await issuedCount(early)).toBe(0);
    expect(await issuedCount(late)).toBe(0);
  });

  it('stores no second row when an issue is delivered twice', async () => {
    const dealId = await openDeal(5);
    const created = body(await createCoupon(couponRequest(dealId, users[2]!.cookie), lambdaContext()));
    await until(async () => (await couponRows(dealId)).length === 1, 60_000, 'row');

    const again: CouponRecord = { couponId: created.couponId, dealId, userId: users[2]!.id, issuedAt: Date.now() };
    const impostor: CouponRecord = { ...again, couponId: `${dealId}.000000000AAAAAAAAAAAAAA` };
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queue.url,
        Entries: [
          { Id: '1', MessageBody: encodeHandOffs([{ kind: 'coupons', record: again }]) },
          { Id: '2', MessageBody: encodeHandOffs([{ kind: 'coupons', record: impostor }]) },
        ],
      }),
    );
    await until(async () => (await depth(sqs, queue.url)) === 0, 60_000, 'drained');

    expect((await couponRows(dealId)).map((r) => r.id)).toEqual([created.couponId]);
  });

  it('stores one row per user even if Redis lost its record of holders (the unique key backstops it)', async () => {
    // Prepare: two pending coupons for one user, as after a Redis failover that lost the holders hash.
    const dealId = await openDeal(5);
    const userId = users[7]!.id;
    const first: CouponRecord = { couponId: `${dealId}.000000001AAAAAAAAAAAAAA`, dealId, userId, issuedAt: Date.now() };
    const second: CouponRecord = { ...first, couponId: `${dealId}.000000002AAAAAAAAAAAAAA` };
    await redis().hset(dealKeys(dealId).outbox, first.couponId, JSON.stringify(first), second.couponId, JSON.stringify(second));

    // Act
    await writeKind(coupons, [first, second]);

    // Assess
    expect(await couponRows(dealId)).toHaveLength(1);
  });

  it('lists the caller’s coupons, pending ones included', async () => {
    const dealId = await openDeal(5);
    const user = users[3]!;
    const created = body(await createCoupon(couponRequest(dealId, user.cookie), lambdaContext()));

    const listed = body(await listMyCoupons(httpEvent('get-me', { path: '/me/coupons', cookies: [user.cookie] }), lambdaContext()));

    expect(listed.coupons).toContainEqual(expect.objectContaining({ couponId: created.couponId, dealId }));
  });

  it('lists coupons of two deals, whose keys live in two hash slots (a cluster refused the one pipeline with a 500)', async () => {
    // Prepare
    const [firstDeal, secondDeal] = [await openDeal(5), await openDeal(5)];
    const user = users[10]!;
    const first = body(await createCoupon(couponRequest(firstDeal, user.cookie), lambdaContext()));
    const second = body(await createCoupon(couponRequest(secondDeal, user.cookie), lambdaContext()));

    // Act
    const listed = await listMyCoupons(httpEvent('get-me', { path: '/me/coupons', cookies: [user.cookie] }), lambdaContext());

    // Assess
    expect(listed.statusCode).toBe(200);
    expect(body(listed).coupons).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ couponId: first.couponId, dealId: firstDeal }),
        expect.objectContaining({ couponId: second.couponId, dealId: secondDeal }),
      ]),
    );
  });

  it('shows a coupon the database guard rejected as rejected, and lets its user ask again', async () => {
    // Prepare: the deal's one coupon is issued and stored, then Redis loses that issue, and issues it again.
    const dealId = await openDeal(1);
    const [first, second] = [users[8]!, users[9]!];
    const kept = body(await createCoupon(couponRequest(dealId, first.cookie), lambdaContext()));
    await until(async () => (await couponRows(dealId)).length === 1 && (await redis().hlen(dealKeys(dealId).outbox)) === 0, 60_000, 'first written');
    await redis().hincrby(dealKeys(dealId).state, 'issued', -1);
    const refused = body(await createCoupon(couponRequest(dealId, second.cookie), lambdaContext()));
    await until(async () => (await depth(sqs, queue.url)) === 0 && (await redis().hlen(dealKeys(dealId).outbox)) === 0, 60_000, 'second written');

    // Act
    const listed = body(await listMyCoupons(httpEvent('get-me', { path: '/me/coupons', cookies: [second.cookie] }), lambdaContext()));
    const again = await createCoupon(couponRequest(dealId, second.cookie), lambdaContext());

    // Assess: the second user is told the truth, and is not held to a coupon they never got.
    expect((await couponRows(dealId)).map((r) => r.id)).toEqual([kept.couponId]);
    expect(listed.coupons.filter((c: { dealId: string }) => c.dealId === dealId)).toEqual([{ couponId: refused.couponId, dealId, status: 'rejected' }]);
    expect(body(again).error.code).toBe('SOLD_OUT');
  });

  describe('bad input changes nothing', () => {
    it.each(['{deal}', 'de*l', "x')..redis.call('FLUSHALL')", 'a'.repeat(65)])('answers the deal id %j with 400', async (dealId) => {
      const result = await createCoupon(couponRequest(dealId, users[4]!.cookie), lambdaContext());

      expect(result.statusCode).toBe(400);
      expect(await keysMatching(`${literalPattern(`{deal:${dealId}}`)}*`)).toEqual([]);
    });

    it('answers an unknown deal with 404 and no session with 401', async () => {
      const unknown = await createCoupon(couponRequest('no-such-deal', users[4]!.cookie), lambdaContext());
      const anonymous = await createCoupon(couponRequest('no-such-deal', 'sid=1.AAAAAAAAAAAAAAAAAAAAAA'), lambdaContext());

      expect(unknown.statusCode).toBe(404);
      expect(anonymous.statusCode).toBe(401);
      expect(await redis().exists(dealKeys('no-such-deal').state)).toBe(0);
    });

    it.each([
      ['a window that closes before it opens', { opensAt: '2030-01-02T00:00:00Z', closesAt: '2030-01-01T00:00:00Z', limit: 5 }],
      ['a limit of 0', { opensAt: '2030-01-01T00:00:00Z', closesAt: '2030-01-02T00:00:00Z', limit: 0 }],
      ['a date that is not a date', { opensAt: 'soon', closesAt: '2030-01-02T00:00:00Z', limit: 5 }],
      ['a date MySQL cannot store', { opensAt: '2030-01-01T00:00:00Z', closesAt: '2100-01-01T00:00:00Z', limit: 5 }],
    ])('refuses a deal with %s', async (_, changes) => {
      const dealId = `deal-${randomBytes(5).toString('hex')}`;

      const result = await putDeal(dealRequest(dealId, admin.cookie, { title: 'x', ...changes }), lambdaContext());

      expect(result.statusCode).toBe(400);
      expect(await redis().exists(dealKeys(dealId).state)).toBe(0);
    });

    it('answers a retry-safe 503 and changes neither Redis nor MySQL when MySQL refuses the deal', async () => {
      // Prepare: a real MySQL failure, raised by a trigger for one title only.
      const dealId = await openDeal(3);
      const trigger = `fail_${randomBytes(4).toString('hex')}`;
      await sql(`CREATE TRIGGER ${trigger} BEFORE UPDATE ON deals FOR EACH ROW
                 IF NEW.title = '${trigger}' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'refused by test'; END IF`);
      const window = { opensAt: new Date(Date.now() - HOUR).toISOString(), closesAt: new Date(Date.now() + 2 * HOUR).toISOString() };

      try {
        // Act
        const result = await putDeal(dealRequest(dealId, admin.cookie, { title: trigger, ...window, limit: 50 }), lambdaContext());

        // Assess
        expect(result.statusCode).toBe(503);
        expect(result.headers?.['retry-after']).toBe('1');
        expect(await redis().hget(dealKeys(dealId).state, 'limit')).toBe('3');
        expect(await sql<RowDataPacket>('SELECT title, coupon_limit FROM deals WHERE id = ?', [dealId])).toEqual([{ title: 'Half price', coupon_limit: 3 }]);
      } finally {
        await sql(`DROP TRIGGER ${trigger}`);
      }
    });

    it('refuses a limit below the coupons already issued, and non-admins', async () => {
      const dealId = await openDeal(3);
      await createCoupon(couponRequest(dealId, users[5]!.cookie), lambdaContext());
      await createCoupon(couponRequest(dealId, users[6]!.cookie), lambdaContext());
      const window = { opensAt: new Date(Date.now() - HOUR).toISOString(), closesAt: new Date(Date.now() + HOUR).toISOString() };

      const shrunk = await putDeal(dealRequest(dealId, admin.cookie, { title: 'x', ...window, limit: 1 }), lambdaContext());
      const byUser = await putDeal(dealRequest(dealId, users[5]!.cookie, { title: 'x', ...window, limit: 100 }), lambdaContext());

      expect(shrunk.statusCode).toBe(409);
      expect(byUser.statusCode).toBe(403);
      expect(await redis().hget(dealKeys(dealId).state, 'limit')).toBe('3');
      expect(await sql<RowDataPacket>('SELECT coupon_limit FROM deals WHERE id = ?', [dealId])).toEqual([{ coupon_limit: 3 }]);
    });
  });
});
