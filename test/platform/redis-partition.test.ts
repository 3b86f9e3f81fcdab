import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../infra/twin/services/processes';
import { redis } from '../../shared/platform/clients/redis';
import { httpEvent, lambdaContext } from '../support/events';
import { createUser, type TestUser } from '../support/factories';
import { redisCommand, startRedisServer } from '../../infra/twin/faults/redis-server';
import { signedInUsers, type SignedInUser } from '../support/sessions';
import { startTcpProxy } from '../../infra/twin/faults/tcp-proxy';
import { until } from '../../shared/platform/wait';
import { route } from '../support/routes';

const createSession = await route('create-session');
const getMe = await route('get-me');

type Result = APIGatewayProxyStructuredResultV2;

/** How long an answer may take while Redis cannot be reached: well under the functions' 10 s timeout. */
const FAST_MS = 1_500;
/** Past this a handler is taken to hang; the test says so rather than waiting for its own timeout. */
const HANG_MS = 5_000;

async function timed(handler: (event: APIGatewayProxyEventV2, context: Context) => Promise<Result>, event: APIGatewayProxyEventV2) {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${HANG_MS} ms`)), HANG_MS)));
  try {
    const result = await Promise.race([handler(event, lambdaContext()), hung]);
    return { result, ms: performance.now() - started };
  } finally {
    clearTimeout(timer);
  }
}

const signIn = (user: TestUser) => timed(createSession, httpEvent('post-sessions', { body: { email: user.email, password: user.password } }));
const me = (cookie: string) => timed(getMe, httpEvent('get-me', { cookies: [cookie] }));

// Redis behind a stand-in for the network, set before anything first uses the shared client.
const server = await startRedisServer(await freePort());
const network = await startTcpProxy(server.port);
process.env.REDIS_URL = `redis://127.0.0.1:${network.port}`;

describe('Redis cut off by a partition (the connection stays open, nothing answers)', () => {
  let user: TestUser;
  let reader: SignedInUser;

  beforeAll(async () => {
    user = await createUser();
    reader = (await signedInUsers(1))[0]!;
    network.pause();
  });

  afterAll(async () => {
    redis().disconnect();
    await network.close();
    await server.kill();
  });

  it('answers sign-in and /me with 503 once their commands time out, well before the function would', async () => {
    const [signedIn, read] = await Promise.all([signIn(user), me(reader.cookie)]);

    expect(signedIn.result.statusCode).toBe(503);
    expect(read.result.statusCode).toBe(503);
    expect(Math.max(signedIn.ms, read.ms)).toBeLessThan(FAST_MS);
  });

  it('serves again once the connection is reset, without running what its callers were told failed', async () => {
    const sessions = () => redisCommand(server.port, 'ZCARD', `{user:${user.id}}:sessions`);
    const before = await sessions();

    // TCP gives up on the partitioned connection; the sign-in it held never reached Redis.
    network.dropConnections();
    network.resume();

    await until(async () => (await signIn(user)).result.statusCode === 201, 5_000, 'sign-in answering 201');
    expect((await me(reader.cookie)).result.statusCode).toBe(200);
    // The session of the sign-in that answered 503 was not made when the client connected again.
    expect(await sessions()).toBe(Number(before) + 1);
  });
});
