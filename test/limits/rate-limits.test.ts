import { randomBytes } from 'node:crypto';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { redis } from '../../shared/platform/clients/redis';
import { gcra, LIMITS } from '../../shared/limits/limits';
import { mailRateKeys, takeMailRates } from '../../shared/limits/rate';
import { exhaust } from '../support/rates';
import { upsertItemStock } from '../../shared/sale/orders/items';
import { openSale, remainingStock } from '../../shared/sale/orders/sale';
import { luaScript } from '../../shared/platform/redis/script';
import { httpEvent, lambdaContext } from '../support/events';
import { createUser as makeUser } from '../support/factories';
import { orderEvent } from '../support/order-events';
import { sql, uniqueItemId } from '../support/orders';
import { kindsUnderTest } from '../support/reservations';
import { signedInUsers } from '../support/sessions';
import { until } from '../../shared/platform/wait';
import { route } from '../support/routes';

const createSession = await route('create-session');
const createOrder = await route('create-order');
const createUser = await route('create-user');

type Result = APIGatewayProxyStructuredResultV2;
const body = (r: Result) => JSON.parse(r.body ?? 'null');

/** A source of its own per use, from 10.0.0.0/8 (outside the suite's load-test allowance), so no two tests share one. */
const newSource = () => `10.${[...randomBytes(3)].join('.')}`;
const unknownAddress = () => `nobody-${randomBytes(4).toString('hex')}@example.com`;

const signIn = (email: string, password: string, sourceIp: string) =>
  createSession(httpEvent('post-sessions', { body: { email, password }, sourceIp }), lambdaContext());

function expectLimited(result: Result) {
  expect(result.statusCode).toBe(429);
  expect(result.headers?.['retry-after']).toMatch(/^[1-9]\d*$/);
  expect(body(result).error.code).toBe('RATE_LIMITED');
}

describe('rate limits', () => {
  describe('sign-in', () => {
    it('locks an address out from the source that guessed at it, and from there only', async () => {
      // Prepare
      const user = await makeUser();
      const [attacker, owner] = [newSource(), newSource()];

      // Act
      const guesses = [];
      for (let i = 0; i < LIMITS.signInLockout.failures; i++) guesses.push(await signIn(user.email, 'wrong password!!', attacker));
      const rightPasswordFromAttacker = await signIn(user.email, user.password, attacker);
      const fromElsewhere = await signIn(user.email, user.password, owner);

      // Assess
      expect(guesses.map((r) => r.statusCode)).toEqual(guesses.map(() => 401));
      expectLimited(rightPasswordFromAttacker);
      expect(fromElsewhere.statusCode).toBe(201);
    });

    it('answers a locked-out unknown address exactly as a locked-out account, so neither says it exists', async () => {
      const user = await makeUser();
      const source = newSource();
      const lockOut = async (email: string) => {
        for (let i = 0; i < LIMITS.signInLockout.failures; i++) await signIn(email, 'wrong password!!', source);
        return signIn(email, 'wrong password!!', source);
      };

      const [known, unknown] = [await lockOut(user.email), await lockOut(unknownAddress())];

      expectLimited(known);
      expect(unknown.statusCode).toBe(known.statusCode);
      expect(body(unknown)).toEqual(body(known));
    });

    it('holds one source to its rate across every address it tries', async () => {
      const source = newSource();

      // All at once: one after another, each password check lets the rate refill a little.
      const answers = await Promise.all(Array.from({ length: LIMITS.signInPerSource.count + 5 }, () => signIn(unknownAddress(), 'wrong password!!', source)));

      expect(answers.filter((r) => r.statusCode === 401)).toHaveLength(LIMITS.signInPerSource.count);
      answers.filter((r) => r.statusCode !== 401).forEach(expectLimited);
      expect(answers.filter((r) => r.statusCode === 429)).toHaveLength(5);
    });

    it('makes each lockout of a pair longer than the last, and lets the pair in again once it passes', async () => {
      // The gate on its own, with lockouts short enough to wait out (the API's are minutes).
      const gate = luaScript<[string], number[]>(new URL('../../shared/limits/lua/sign-in-gate-1.lua', import.meta.url));
      const key = `{ip:${newSource()}}:signin:test-${randomBytes(4).toString('hex')}`;
      const attempt = async () => Number(await gate.run(redis(), [key], [2, 200, 1_000, 10_000]));
      const lockout = async () => Number(await redis().hget(key, 'until')) - Date.now();

      const first = [await attempt(), await attempt(), await attempt()];
      const firstLockout = await lockout();
      await until(async () => (await lockout()) <= 0, 60_000, 'the first lockout over', 10);
      const second = [await attempt(), await attempt(), await attempt()];
      const secondLockout = await lockout();

      expect(first.slice(0, 2)).toEqual([0, 0]);
      expect(first[2]).toBeGreaterThan(0);
      expect(firstLockout).toBeLessThanOrEqual(200);
      expect(second.slice(0, 2)).toEqual([0, 0]);
      expect(second[2]).toBeGreaterThan(200);
      expect(secondLockout).toBeGreaterThan(200);
    });

    it('lets no more attempts in than the threshold, however many arrive at once', async () => {
      const user = await makeUser();
      const source = newSource();

      const answers = await Promise.all(Array.from({ length: 20 }, () => signIn(user.email, 'wrong password!!', source)));

      expect(answers.filter((r) => r.statusCode === 401)).toHaveLength(LIMITS.signInLockout.failures);
      expect(answers.filter((r) => r.statusCode === 429)).toHaveLength(20 - LIMITS.signInLockout.failures);
    });
  });

  it('holds one source to its sign-ups, creating no account past the limit', async () => {
    const source = newSource();
    const signUp = (email: string) =>
      createUser(httpEvent('post-sessions', { path: '/users', body: { email, password: 'a long enough password' }, sourceIp: source }), lambdaContext());

    const answers = [];
    for (let i = 0; i < LIMITS.signUpPerSource.count; i++) answers.push(await signUp(unknownAddress()));
    const refusedEmail = unknownAddress();
    const refused = await signUp(refusedEmail);

    expect(answers.map((r) => r.statusCode)).toEqual(answers.map(() => 201));
    expectLimited(refused);
    expect(await sql('SELECT id FROM users WHERE email = ?', [refusedEmail])).toEqual([]);
  });

  it('holds a buyer to their orders per item, leaving the stock as it was', async () => {
    const itemId = uniqueItemId('limited');
    await upsertItemStock(itemId, 1_000, 100);
    await openSale(itemId, 1_000, 100);
    const [buyer] = await signedInUsers(1);

    const answers = [];
    for (let i = 0; i <= LIMITS.ordersPerBuyer.count; i++)
      answers.push(await createOrder(orderEvent(itemId, buyer!.cookie, `k${i}`, { quantity: 1 }), lambdaContext()));

    expect(answers.slice(0, -1).map((r) => r.statusCode)).toEqual(answers.slice(0, -1).map(() => 202));
    expectLimited(answers.at(-1)!);
    expect(await remainingStock(itemId)).toBe(1_000 - LIMITS.ordersPerBuyer.count);
  });

  describe.each(kindsUnderTest)('inside the reservation script ($name)', (t) => {
    const perSource = t.kind.name === 'orders' ? LIMITS.ordersPerSource : LIMITS.couponsPerSource;
    const refusal = (error: { code?: string }) => error.code ?? 'error';

    // An item split into buckets holds a source to its rate in each bucket (its keys must share the buyer's slot).
    it.runIf(t.tags('owner').length === 1)('holds one source to its rate across buyers, and a refused attempt takes from no rate', async () => {
      // Prepare
      const owner = await t.open(1_000);
      const source = newSource();

      // Act
      const answers = await Promise.all(Array.from({ length: perSource.count + 1 }, (_, i) => t.reserve(owner, i + 1, source).then(() => 'reserved', refusal)));
      const refusedBuyer = answers.indexOf('RATE_LIMITED') + 1;
      const fromElsewhere = await t.reserve(owner, perSource.count + 2, newSource());

      // Assess
      expect(answers.filter((a) => a === 'reserved')).toHaveLength(perSource.count);
      expect(refusedBuyer).toBeGreaterThan(0);
      expect(await redis().exists(`${t.tags(owner)[0]}:rate:buyer:${refusedBuyer}`)).toBe(0);
      expect(fromElsewhere.replayed).toBe(false);
    });

    it('answers sold out without taking from any rate', async () => {
      const owner = await t.open(1);
      await t.reserve(owner, 1);
      const source = newSource();

      const answers = await Promise.all(Array.from({ length: perSource.count + 1 }, (_, i) => t.reserve(owner, i + 2, source).then(() => 'reserved', refusal)));

      expect(new Set(answers)).toEqual(new Set(['SOLD_OUT']));
      for (const tag of t.tags(owner)) expect(await redis().exists(`${tag}:rate:source:${source}`)).toBe(0);
    });
  });

  it('holds a coupon holder asking again to their rate', async () => {
    const [t] = kindsUnderTest.filter((k) => k.kind.name === 'coupons');
    const owner = await t!.open(10);

    const asks = [];
    for (let i = 0; i < LIMITS.couponsPerUser.count; i++) asks.push((await t!.reserve(owner, 1)).replayed);
    const past = await t!.reserve(owner, 1).then(
      () => 'answered',
      (error: { code?: string }) => error.code,
    );

    expect(asks).toEqual([false, ...Array(LIMITS.couponsPerUser.count - 1).fill(true)]);
    expect(past).toBe('RATE_LIMITED');
  });

  describe('inbound mail', () => {
    /** A sender domain and readers (ids no one holds: the rates need none) of their own per test, so no two tests share a rate. */
    const newSender = () => ({ domain: `sender-${randomBytes(4).toString('hex')}.example`, authenticated: true });
    const newReaders = (count: number) => Array.from({ length: count }, () => randomBytes(4).readUInt32BE(0) + 1);
    /** The TAT a rate key holds: what a take wrote, null if none did. */
    const tatOf = async (key: string) => (await redis().get(key)) as string | null;

    it('takes every rate of a delivery all admit, one interval each', async () => {
      // Prepare
      const sender = newSender();
      const [reader] = newReaders(1);
      const keys = mailRateKeys(reader!, sender);
      const redisNow = async () => {
        const [seconds, micros] = await redis().time();
        return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
      };
      const before = await redisNow();

      // Act
      const refusals = await takeMailRates(sender, [reader!]);
      const after = await redisNow();

      // Assess
      expect(refusals).toEqual([undefined]);
      for (const [key, rate] of [
        [keys.readerSender, LIMITS.mailPerReaderFromSender],
        [keys.reader, LIMITS.mailPerReader],
        [keys.senderDomain, LIMITS.mailPerSenderDomain],
      ] as const) {
        const [interval] = gcra(rate);
        const tat = Number(await tatOf(key));
        expect(tat).toBeGreaterThanOrEqual(before + interval);
        expect(tat).toBeLessThanOrEqual(after + interval);
      }
    });

    it("takes nothing from the reader's rate nor the domain's for a delivery its sender may not send that reader", async () => {
      // Prepare
      const [sender, alone] = [newSender(), newSender()];
      const [flooded, other] = newReaders(2);
      const keys = mailRateKeys(flooded!, sender);
      const aloneKeys = mailRateKeys(flooded!, alone);
      await exhaust(keys.readerSender, LIMITS.mailPerReaderFromSender);
      await exhaust(aloneKeys.readerSender, LIMITS.mailPerReaderFromSender);
      const readerSenderBefore = await tatOf(keys.readerSender);

      // Act
      const refusals = await takeMailRates(sender, [flooded!, other!]);
      const aloneRefusals = await takeMailRates(alone, [flooded!]);

      // Assess
      expect(refusals).toEqual(['rate-reader-sender', undefined]);
      expect(await tatOf(keys.readerSender)).toBe(readerSenderBefore);
      expect(await tatOf(keys.reader)).toBeNull();
      // The other reader's delivery took from the domain; a mail refused for its every reader takes nothing from it.
      expect(Number(await tatOf(keys.senderDomain))).toBeGreaterThan(0);
      expect(aloneRefusals).toEqual(['rate-reader-sender']);
      expect(await tatOf(aloneKeys.senderDomain)).toBeNull();
    });

    it("past the reader's own rate, still counts the delivery against its sender to that reader and its domain", async () => {
      // Prepare
      const sender = newSender();
      const [reader] = newReaders(1);
      const keys = mailRateKeys(reader!, sender);
      await exhaust(keys.reader, LIMITS.mailPerReader);
      const readerBefore = await tatOf(keys.reader);

      // Act
      const refusals = await takeMailRates(sender, [reader!]);

      // Assess
      expect(refusals).toEqual(['rate-reader']);
      expect(await tatOf(keys.reader)).toBe(readerBefore);
      expect(Number(await tatOf(keys.readerSender))).toBeGreaterThan(0);
      expect(Number(await tatOf(keys.senderDomain))).toBeGreaterThan(0);
    });
  });
});
