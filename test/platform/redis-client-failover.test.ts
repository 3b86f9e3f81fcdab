import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../infra/twin/services/processes';
import { redis } from '../../shared/platform/clients/redis';
import { httpEvent, lambdaContext } from '../support/events';
import { createUser, createUsers, type TestUser } from '../support/factories';
import { redisCommand, startRedisServer, type TestRedisServer } from '../../infra/twin/faults/redis-server';
import { startTcpProxy } from '../../infra/twin/faults/tcp-proxy';
import { until } from '../../shared/platform/wait';
import { parseSessionCookie, sessionKey } from '../../shared/sessions/store';
import { route } from '../support/routes';

const createSession = await route('create-session');
const getMe = await route('get-me');

type Result = APIGatewayProxyStructuredResultV2;

const sidCookie = (result: Result) => result.cookies?.find((c) => c.startsWith('sid='))?.split(';')[0];
/** The session key a `sid=<user>.<session>` cookie names. */
const sessionKeyOf = (cookie: string) => sessionKey(parseSessionCookie(cookie.slice('sid='.length))!);
const signIn = (user: TestUser) => createSession(httpEvent('post-sessions', { body: { email: user.email, password: user.password } }), lambdaContext());

async function replication(port: number): Promise<string> {
  return String(await redisCommand(port, 'INFO', 'replication'));
}

/** Makes `replica` follow `primary` and waits until it is in sync. */
async function follow(replica: number, primary: number): Promise<void> {
  await redisCommand(replica, 'REPLICAOF', '127.0.0.1', primary);
  await until(async () => /master_link_status:up/.test(await replication(replica)), 60_000, `port ${replica} in sync with ${primary}`);
}

// A primary and its replica, as ElastiCache's Multi-AZ pair, behind a stand-in for the primary endpoint.
const [primary, replica] = await Promise.all([startRedisServer(await freePort()), startRedisServer(await freePort())]);
const endpoint = await startTcpProxy(primary.port);
process.env.REDIS_URL = `redis://127.0.0.1:${endpoint.port}`;

/**
 * Promotes `to`, makes `from` its replica and points the endpoint at `to`. The client's open
 * connection still leads to `from`, which now refuses writes.
 */
async function failOver(from: TestRedisServer, to: TestRedisServer): Promise<void> {
  await redisCommand(to.port, 'REPLICAOF', 'NO', 'ONE');
  await follow(from.port, to.port);
  endpoint.retarget(to.port);
}

describe('a Multi-AZ failover', () => {
  let user: TestUser;

  beforeAll(async () => {
    user = await createUser();
    await follow(replica.port, primary.port);
    // The client's connection is open to the primary before the failover.
    expect((await signIn(user)).statusCode).toBe(201);
  });

  afterAll(async () => {
    redis().disconnect();
    await endpoint.close();
    await Promise.all([primary.kill(), replica.kill()]);
  });

  it('takes writes that meet READONLY on the old primary to the new one', async () => {
    // Prepare
    await failOver(primary, replica);

    // Act: sign-ins of many users in flight together, as many meet the failover at once (one
    // account's concurrent attempts from one source would meet its lockout instead).
    const users = await createUsers(20);
    const signedIn = await Promise.all(users.map(signIn));

    // Assess
    expect(signedIn.map((result) => result.statusCode)).toEqual(signedIn.map(() => 201));
    const read = await getMe(httpEvent('get-me', { cookies: [sidCookie(signedIn[0]!)!] }), lambdaContext());
    expect(read.statusCode).toBe(200);
    expect(JSON.parse(read.body!)).toEqual({ id: users[0]!.id, email: users[0]!.email, role: 'user' });
  });

  it('answers a sign-in whose sign-out of the presented session (a transaction) met READONLY with 201 or a retry-safe 503, never a 500', async () => {
    // Prepare: a session made on the current primary, then a failover back.
    const presented = sidCookie(await signIn(user))!;
    await failOver(replica, primary);
    const rotate = () =>
      createSession(httpEvent('post-sessions', { body: { email: user.email, password: user.password }, cookies: [presented] }), lambdaContext());

    // Act
    const first = await rotate();
    const retried = first.statusCode === 503 ? await rotate() : first;

    // Assess
    expect([201, 503]).toContain(first.statusCode);
    if (first.statusCode === 503) expect(JSON.parse(first.body!).error.code).toBe('UNAVAILABLE');
    expect(retried.statusCode).toBe(201);
    expect((await getMe(httpEvent('get-me', { cookies: [presented] }), lambdaContext())).statusCode).toBe(401);
  });

  it('refuses a session the new primary no longer holds, though the old primary, behind it, still answers the read', async () => {
    // Prepare: a session on the current primary, copied to its replica; the replica promoted and
    // signed out of it there, while the old primary turns replica of a primary it cannot reach
    // (behind, read-only, still answering reads from what it had). The client's connection still
    // leads to the old primary.
    const cookie = sidCookie(await signIn(user))!;
    await until(async () => Number(await redisCommand(replica.port, 'EXISTS', sessionKeyOf(cookie))) === 1, 60_000, 'the session on the replica');
    await redisCommand(replica.port, 'REPLICAOF', 'NO', 'ONE');
    await redisCommand(primary.port, 'REPLICAOF', '127.0.0.1', await freePort());
    endpoint.retarget(replica.port);
    await redisCommand(replica.port, 'DEL', sessionKeyOf(cookie));

    // Act
    const read = await getMe(httpEvent('get-me', { cookies: [cookie] }), lambdaContext());

    // Assess: the old primary answered the read with the session; the new one, which decides, has none.
    expect(Number(await redisCommand(primary.port, 'EXISTS', sessionKeyOf(cookie)))).toBe(1);
    expect(read.statusCode).toBe(401);
  });
});
