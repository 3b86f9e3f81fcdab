import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { httpEvent, lambdaContext } from '../support/events';
import { route } from '../support/routes';
import { signedInUsers } from '../support/sessions';

type Handler = (event: APIGatewayProxyEventV2, context: ReturnType<typeof lambdaContext>) => Promise<APIGatewayProxyStructuredResultV2>;

const THE_QUEUE = process.env.RESERVATION_QUEUE_URL!;
/** A queue the emulator does not have: its error names it, as AWS's name the queue's ARN. */
const MISSING_QUEUE = THE_QUEUE.replace(/[^/]+$/, 'surge-health-missing-queue');

const THE_DATABASE = process.env.DATABASE_URL!;

/** A fresh instance of the health function (its check cache its own), reading the order queue's and the database's URLs given, and its Redis client. */
async function healthInstance(queueUrl: string, databaseUrl = THE_DATABASE) {
  vi.resetModules();
  process.env.RESERVATION_QUEUE_URL = queueUrl;
  process.env.DATABASE_URL = databaseUrl;
  const handler = await route('health');
  const { redis } = await import('../../shared/platform/clients/redis');
  const { CHECK_CACHE_MS } = await import('../../shared/platform/health');
  return { handler, redis, CHECK_CACHE_MS };
}

const ask = async (handler: Handler, changes: { detail?: boolean; cookie?: string } = {}) => {
  const event = httpEvent('get-me', { path: '/health' });
  // The fixture's own session cookie is not one the store knows; only the one given is sent.
  delete event.cookies;
  if (changes.cookie) event.cookies = [changes.cookie];
  if (changes.detail) {
    event.rawQueryString = 'detail=1';
    event.queryStringParameters = { detail: '1' };
  }
  const result = await handler(event, lambdaContext());
  return { status: result.statusCode, body: JSON.parse(result.body!) };
};

afterEach(() => {
  vi.restoreAllMocks();
  process.env.RESERVATION_QUEUE_URL = THE_QUEUE;
  process.env.DATABASE_URL = THE_DATABASE;
});

describe('GET /health', () => {
  it('answers 200 naming nothing down when Redis, MySQL and the queue answer', async () => {
    // Prepare
    const { handler } = await healthInstance(THE_QUEUE);

    // Act
    const result = await ask(handler);

    // Assess
    expect(result).toEqual({ status: 200, body: { status: 'ok', down: [] } });
  });

  it('tells the public only the names of what is down, never its error text', async () => {
    // Prepare
    const { handler } = await healthInstance(MISSING_QUEUE);

    // Act
    const result = await ask(handler);

    // Assess
    expect(result).toEqual({ status: 503, body: { status: 'unavailable', down: ['queue'] } });
    expect(JSON.stringify(result.body)).not.toContain('surge-health-missing-queue');
  });

  it('names the database down when nothing answers on its address, or what answers there is not MySQL', async () => {
    // Prepare: a port nothing listens on, and one where Redis (not MySQL) answers.
    const closed = new URL(THE_DATABASE);
    closed.port = '1';
    const notMysql = new URL(THE_DATABASE);
    notMysql.hostname = new URL(process.env.REDIS_URL!).hostname;
    notMysql.port = new URL(process.env.REDIS_URL!).port || '6379';

    // Act
    const nothing = await ask((await healthInstance(THE_QUEUE, closed.href)).handler);
    const redisThere = await ask((await healthInstance(THE_QUEUE, notMysql.href)).handler);

    // Assess
    expect(nothing).toEqual({ status: 503, body: { status: 'unavailable', down: ['database'] } });
    expect(redisThere).toEqual({ status: 503, body: { status: 'unavailable', down: ['database'] } });
  });

  it("shows an admin asking for detail each dependency's error", async () => {
    // Prepare
    const { handler } = await healthInstance(MISSING_QUEUE);
    const [admin] = await signedInUsers(1, 'admin');

    // Act
    const result = await ask(handler, { detail: true, cookie: admin!.cookie });

    // Assess
    expect(result.status).toBe(503);
    expect(result.body).toMatchObject({ status: 'unavailable', down: ['queue'], dependencies: { redis: 'ok', database: 'ok' } });
    expect(result.body.dependencies.queue).toMatch(/^down: /);
    expect(Date.parse(result.body.checkedAt)).not.toBeNaN();
  });

  it('refuses the detail without a session (401) or to a user who is not an admin (403)', async () => {
    // Prepare
    const { handler } = await healthInstance(THE_QUEUE);
    const [user] = await signedInUsers(1, 'user');

    // Act
    const anonymous = await ask(handler, { detail: true });
    const notAdmin = await ask(handler, { detail: true, cookie: user!.cookie });

    // Assess
    expect(anonymous.status).toBe(401);
    expect(notAdmin).toEqual({ status: 403, body: { error: { code: 'FORBIDDEN', message: 'Admins only' } } });
  });

  it('answers a flood from one check per instance, and checks again once the check is older than the cache', async () => {
    // Prepare
    const { handler, redis, CHECK_CACHE_MS } = await healthInstance(THE_QUEUE);
    // Each check asks all three at once; Redis's ping is the one that can be counted in-process.
    const checks = vi.spyOn(redis(), 'ping');
    const start = Date.now();
    const now = vi.spyOn(Date, 'now').mockReturnValue(start);

    // Act
    const flood = await Promise.all(Array.from({ length: 50 }, () => ask(handler)));
    const afterFlood = checks.mock.calls.length;
    now.mockReturnValue(start + CHECK_CACHE_MS);
    await ask(handler);

    // Assess
    expect(flood.every((r) => r.status === 200)).toBe(true);
    expect(afterFlood).toBe(1);
    expect(checks).toHaveBeenCalledTimes(2);
  });
});
