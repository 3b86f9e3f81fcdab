import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../infra/twin/services/processes';
import { cache } from '../../shared/cache/cache';
import { insertProgram } from '../../shared/catalog/programs';
import { redis } from '../../shared/platform/clients/redis';
import { upsertItemStock } from '../../shared/sale/orders/items';
import { openSale } from '../../shared/sale/orders/sale';
import { httpEvent, lambdaContext } from '../support/events';
import { createUser, type TestUser } from '../support/factories';
import { orderEvent } from '../support/order-events';
import { uniqueItemId } from '../support/orders';
import { startRedisServer, type TestRedisServer } from '../../infra/twin/faults/redis-server';
import { signedInUsers, type SignedInUser } from '../support/sessions';
import { until } from '../../shared/platform/wait';
import { route } from '../support/routes';

const createSession = await route('create-session');
const createOrder = await route('create-order');
const getMe = await route('get-me');
const listPrograms = await route('list-programs');

type Result = APIGatewayProxyStructuredResultV2;

/** How long an answer may take while Redis is away: well under the functions' 10 s timeout. */
const FAST_MS = 1_500;
/** ioredis's default reconnect backoff doubles up to 5 s; this long down, a client still on it waits seconds. */
const LEFT_DOWN_MS = 4_000;

const body = (result: Result) => JSON.parse(result.body ?? 'null');

async function timed(handler: (event: APIGatewayProxyEventV2, context: Context) => Promise<Result>, event: APIGatewayProxyEventV2) {
  const started = performance.now();
  const result = await handler(event, lambdaContext());
  return { result, ms: performance.now() - started };
}

const signIn = (user: TestUser) => timed(createSession, httpEvent('post-sessions', { body: { email: user.email, password: user.password } }));
const me = (cookie: string) => timed(getMe, httpEvent('get-me', { cookies: [cookie] }));
const order = (itemId: string, buyer: SignedInUser) => timed(createOrder, orderEvent(itemId, buyer.cookie, `away-${buyer.id}`, { quantity: 1 }));

function listCatalog(careerTag: string) {
  const event = httpEvent('get-me', { path: '/programs' });
  event.rawQueryString = `careerTag=${careerTag}`;
  event.queryStringParameters = { careerTag };
  return timed(listPrograms, event);
}

async function openItem(stock: number) {
  const itemId = uniqueItemId('away');
  await upsertItemStock(itemId, stock, 1);
  await openSale(itemId, stock, 1);
  return itemId;
}

// A redis-server of this file's own, set before anything first uses the shared client.
const port = await freePort();
let server: TestRedisServer = await startRedisServer(port);
process.env.REDIS_URL = server.url;

describe('Redis killed (kill -9) and left down', () => {
  let user: TestUser;
  let buyers: SignedInUser[];
  let itemId: string;
  const careerTag = `away-${Date.now().toString(36)}`;

  beforeAll(async () => {
    user = await createUser();
    buyers = await signedInUsers(150);
    itemId = await openItem(1_000);
    await insertProgram({ title: 'Read while Redis is away', careerTag, type: 'course', description: '' });
    expect((await signIn(user)).result.statusCode).toBe(201);
    await server.kill();
  });

  afterAll(async () => {
    cache().close();
    redis().disconnect();
    await server.kill();
  });

  it('answers sign-in at once with a retry-safe 503', async () => {
    const { result, ms } = await signIn(user);

    expect(result.statusCode).toBe(503);
    expect(result.headers).toMatchObject({ 'retry-after': '1' });
    expect(body(result)).toEqual({ error: { code: 'UNAVAILABLE', message: 'Try again shortly' } });
    expect(ms).toBeLessThan(FAST_MS);
  });

  it('answers 150 concurrent orders with 503, none waiting past 1.5 s', async () => {
    await new Promise((resolve) => setTimeout(resolve, LEFT_DOWN_MS));

    const answers = await Promise.all(buyers.map((buyer) => order(itemId, buyer)));

    expect(answers.map(({ result }) => result.statusCode)).toEqual(buyers.map(() => 503));
    expect(Math.max(...answers.map(({ ms }) => ms))).toBeLessThan(FAST_MS);
  });

  it('answers /me with 503, and sign-in too, while Redis stays down', async () => {
    const [signedIn, read] = await Promise.all([signIn(user), me(buyers[0]!.cookie)]);

    expect(signedIn.result.statusCode).toBe(503);
    expect(read.result.statusCode).toBe(503);
    expect(body(read.result).error.code).toBe('UNAVAILABLE');
    expect(Math.max(signedIn.ms, read.ms)).toBeLessThan(FAST_MS);
  });

  it('still serves the catalog, read straight from MySQL', async () => {
    const { result, ms } = await listCatalog(careerTag);

    expect(result.statusCode).toBe(200);
    expect(body(result).items.map((p: { title: string }) => p.title)).toEqual(['Read while Redis is away']);
    expect(ms).toBeLessThan(FAST_MS);
  });

  it('serves again within a few seconds of Redis coming back on the same port', async () => {
    server = await startRedisServer(port);
    const back = Date.now();

    // Nothing was persisted: the sale is opened again, and the buyers' sessions are gone.
    await until(async () => (await signIn(user)).result.statusCode === 201, 5_000, 'sign-in answering 201');
    const recoveredMs = Date.now() - back;
    const reopened = await openItem(10);
    const [buyer] = await signedInUsers(1);
    const ordered = await order(reopened, buyer!);

    expect(recoveredMs).toBeLessThan(5_000);
    expect(ordered.result.statusCode).toBe(202);
    expect((await me(buyer!.cookie)).result.statusCode).toBe(200);
  });
});
