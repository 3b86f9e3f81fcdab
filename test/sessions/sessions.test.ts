import type { Socket } from 'node:net';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { redis } from '../../shared/platform/clients/redis';
import { httpEvent, lambdaContext } from '../support/events';
import { createUser, type TestUser } from '../support/factories';
import { connectionOf, watchCommands } from '../support/redis-nodes';
import { route } from '../support/routes';

const createSession = await route('create-session');
const deleteAllSessions = await route('delete-all-sessions');
const deleteCurrentSession = await route('delete-current-session');
const getMe = await route('get-me');

type Result = APIGatewayProxyStructuredResultV2;

const body = (result: Result) => JSON.parse(result.body ?? 'null');
const sidCookie = (result: Result) => result.cookies?.find((c) => c.startsWith('sid='))?.split(';')[0];

async function signIn(user: { email: string; password: string }, cookies?: string[]): Promise<Result> {
  return createSession(httpEvent('post-sessions', { body: { email: user.email, password: user.password }, ...(cookies ? { cookies } : {}) }), lambdaContext());
}

const me = (cookie: string | undefined) => getMe(httpEvent('get-me', { cookies: cookie ? [cookie] : [] }), lambdaContext());

describe('sessions', () => {
  let user: TestUser;

  beforeAll(async () => {
    user = await createUser();
  });

  it('signs in, reads /me with the cookie, and signs out', async () => {
    // Prepare
    const signedIn = await signIn(user);
    const cookie = sidCookie(signedIn);

    // Act
    const before = await me(cookie);
    const signedOut = await deleteCurrentSession(httpEvent('get-me', { method: 'DELETE', path: '/sessions/current', cookies: [cookie!] }), lambdaContext());
    const after = await me(cookie);

    // Assess
    expect(signedIn.statusCode).toBe(201);
    expect(signedIn.cookies![0]).toMatch(/^sid=\d+\.[A-Za-z0-9_-]{22}; Max-Age=43200; Path=\/; HttpOnly; SameSite=Lax$/);
    expect(body(before)).toEqual({ id: user.id, email: user.email, role: 'user' });
    expect(signedOut.statusCode).toBe(204);
    expect(signedOut.cookies![0]).toMatch(/^sid=; Max-Age=0/);
    expect(after.statusCode).toBe(401);
    expect(body(after).error.code).toBe('UNAUTHENTICATED');
  });

  it('signs in with the address in another case and with spaces around it', async () => {
    const result = await signIn({ email: `  ${user.email.toUpperCase()} `, password: user.password });

    expect(result.statusCode).toBe(201);
    expect(body(result).user).toEqual({ id: user.id, email: user.email, role: 'user' });
  });

  it('refuses a wrong password and an unknown user alike', async () => {
    const wrong = await signIn({ email: user.email, password: 'not it' });
    const unknown = await signIn({ email: 'nobody@surge.test', password: user.password });

    for (const result of [wrong, unknown]) {
      expect(result.statusCode).toBe(401);
      expect(body(result)).toEqual({ error: { code: 'INVALID_CREDENTIALS', message: 'Email or password is wrong' } });
      expect(result.cookies).toBeUndefined();
    }
  });

  it.each([
    ['malformed JSON', { rawBody: '{"email":' }, 400, 'BAD_JSON'],
    ['a missing password', { body: { email: 'a@b.test' } }, 400, 'VALIDATION_FAILED'],
    ['a non-email', { body: { email: 'not-an-email', password: 'x' } }, 400, 'VALIDATION_FAILED'],
    ['a number for a password', { body: { email: 'a@b.test', password: 1 } }, 400, 'VALIDATION_FAILED'],
    ['a non-JSON content type', { body: { email: 'a@b.test', password: 'x' }, headers: { 'content-type': 'text/plain' } }, 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ['an oversized body', { body: { email: 'a@b.test', password: 'x'.repeat(70_000) } }, 413, 'PAYLOAD_TOO_LARGE'],
  ])('answers %s with a JSON 4xx', async (_, changes, status, code) => {
    const result = await createSession(httpEvent('post-sessions', changes), lambdaContext());

    expect(result.statusCode).toBe(status);
    expect(result.headers?.['content-type']).toMatch(/^application\/json/);
    expect(body(result).error.code).toBe(code);
  });

  it.each([
    ['no cookie', undefined],
    ['a forged cookie', 'sid=1.not-a-session-id'],
    ['an unknown session id', 'sid=1.AAAAAAAAAAAAAAAAAAAAAA'],
    ['a session id under another user', 'sid=999999.AAAAAAAAAAAAAAAAAAAAAA'],
    ['an injection attempt', 'sid=1.*}{redis().call("FLUSHALL")--'],
  ])('answers /me with %s with 401', async (_, cookie) => {
    const result = await me(cookie);

    expect(result.statusCode).toBe(401);
    expect(body(result).error.code).toBe('UNAUTHENTICATED');
  });

  it('destroys the session presented at sign-in (rotation)', async () => {
    const first = sidCookie(await signIn(user));

    const second = sidCookie(await signIn(user, [first!]));

    expect(second).not.toBe(first);
    expect((await me(first)).statusCode).toBe(401);
    expect((await me(second)).statusCode).toBe(200);
  });

  it('signs out everywhere through the per-user index', async () => {
    const other = await createUser();
    const cookies = await Promise.all([1, 2, 3].map(async () => sidCookie(await signIn(other))));
    const bystander = sidCookie(await signIn(user));

    const result = await deleteAllSessions(httpEvent('get-me', { method: 'DELETE', path: '/sessions', cookies: [cookies[0]!] }), lambdaContext());

    expect(result.statusCode).toBe(204);
    for (const cookie of cookies) expect((await me(cookie)).statusCode).toBe(401);
    expect((await me(bystander)).statusCode).toBe(200);
    expect(await redis().exists(`{user:${other.id}}:sessions`)).toBe(0);
  });

  it('tells the role to handlers', async () => {
    const admin = await createUser('admin');

    const result = await me(sidCookie(await signIn(admin)));

    expect(body(result).role).toBe('admin');
  });

  describe('Redis round trips per authenticated request', () => {
    it("is exactly one: one write on the function's connection, one command that reads and slides", async () => {
      // Prepare: count what the functions' own connection to the server of the user's sessions (on
      // a cluster, the shard of their hash tag) hands its socket, and watch what that server runs.
      const cookie = sidCookie(await signIn(user));
      const connection = await connectionOf(`{user:${user.id}}`);
      const clientInfo = String(await connection.client('INFO'));
      const address = /addr=(\S+)/.exec(clientInfo)![1]!;
      const commands = await watchCommands(`{user:${user.id}}`);
      const socket = connection.stream as Socket & { _write: Socket['_write']; _writev?: Socket['_writev'] };
      const [write, writev] = [socket._write, socket._writev];
      let writes = 0;
      socket._write = (...args) => {
        writes += 1;
        return write.apply(socket, args);
      };
      socket._writev =
        writev &&
        ((...args) => {
          writes += 1;
          return writev.apply(socket, args);
        });

      // Act: one request at a time, so that no two share a write.
      const requests = 20;
      try {
        for (let i = 0; i < requests; i++) expect((await me(cookie)).statusCode).toBe(200);
      } finally {
        socket._write = write;
        socket._writev = writev;
      }
      const seen = (await commands.settled()).filter(({ source }) => source.endsWith(address)).map(({ args }) => args[0]!.toLowerCase());
      commands.stop();

      // Assess: each request's command left in one write; the server ran it, not a script.
      expect(writes).toBe(requests);
      expect(seen).toEqual(Array.from({ length: requests }, () => 'getex'));
    });
  });
});
