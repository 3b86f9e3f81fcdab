import { randomBytes } from 'node:crypto';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { redis } from '../../shared/platform/clients/redis';
import { cookieValue, createSession, sessionKey, sessionValue, type SessionHandle } from '../../shared/sessions/store';
import { httpEvent, lambdaContext } from '../support/events';
import { route } from '../support/routes';

const getMe = await route('get-me');
const deleteCurrentSession = await route('delete-current-session');

type Result = APIGatewayProxyStructuredResultV2;

const me = (handle: SessionHandle): Promise<Result> => getMe(httpEvent('get-me', { cookies: [`sid=${cookieValue(handle)}`] }), lambdaContext());
const newHandle = (userId: number): SessionHandle => ({ userId, sessionId: randomBytes(16).toString('base64url') });
const HOUR_MS = 3_600_000;

/*
 * A release reads the sessions the release before it wrote, so that the two may serve side by side
 * while a deploy shifts (docs/deploy.md): one string, read and slid by GETEX, as sign-in writes them
 * now, and a hash, as releases before ba0e6ca wrote them. Each is written here as its release did.
 */
describe('session formats', () => {
  it('signs in with one string, its absolute expiry in it', async () => {
    // Act
    const before = Date.now();
    const handle = await createSession({ id: 9_100_000, role: 'user', email: 'one@surge.test' });

    // Assess: the value as sessionValue writes it, its expiry 12 h (the default lifetime) after sign-in.
    const value = await redis().get(sessionKey(handle));
    const [id, role, expiresAt, email] = value!.split('\t');
    expect([id, role, email]).toEqual(['9100000', 'user', 'one@surge.test']);
    expect(Number(expiresAt) - before).toBeGreaterThanOrEqual(12 * HOUR_MS);
    expect(Number(expiresAt) - Date.now()).toBeLessThanOrEqual(12 * HOUR_MS);
  });

  it('reads a session written as one string, and slides its idle timeout', async () => {
    // Prepare: a string session with a minute left of its idle timeout.
    const handle = newHandle(9_100_001);
    await redis().set(sessionKey(handle), sessionValue({ id: 9_100_001, role: 'admin', email: 'tab\tin@surge.test' }, Date.now() + HOUR_MS), 'PX', 60_000);

    // Act
    const result = await me(handle);

    // Assess: the principal as written (the email last, whatever it holds), and the whole idle timeout again.
    expect(result.statusCode).toBe(200);
    expect(JSON.parse(result.body!)).toEqual({ id: 9_100_001, role: 'admin', email: 'tab\tin@surge.test' });
    expect(await redis().pttl(sessionKey(handle))).toBeGreaterThan(60_000);
  });

  it('ends a string session past its absolute lifetime, or one no release writes, and deletes it', async () => {
    // Prepare
    const expired = newHandle(9_100_002);
    const garbled = newHandle(9_100_003);
    await redis().set(sessionKey(expired), sessionValue({ id: 9_100_002, role: 'user', email: 'old@surge.test' }, Date.now() - 1), 'PX', 60_000);
    await redis().set(sessionKey(garbled), '9100003\tuser', 'PX', 60_000);

    // Act
    const results = await Promise.all([me(expired), me(garbled)]);

    // Assess
    expect(results.map((r) => r.statusCode)).toEqual([401, 401]);
    expect([await redis().exists(sessionKey(expired)), await redis().exists(sessionKey(garbled))]).toEqual([0, 0]);
  });

  it('reads a session written as a hash, as the releases before the string wrote it, and slides it', async () => {
    // Prepare
    const handle = newHandle(9_100_004);
    const key = sessionKey(handle);
    await redis().hset(key, 'uid', 9_100_004, 'role', 'user', 'email', 'hash@surge.test', 'exp', Date.now() + HOUR_MS);
    await redis().pexpire(key, 60_000);

    // Act
    const result = await me(handle);

    // Assess
    expect(result.statusCode).toBe(200);
    expect(JSON.parse(result.body!)).toEqual({ id: 9_100_004, role: 'user', email: 'hash@surge.test' });
    expect(await redis().pttl(key)).toBeGreaterThan(60_000);
  });

  it('signs out of a session in either format', async () => {
    // Prepare
    const asString = newHandle(9_100_005);
    const asHash = newHandle(9_100_006);
    await redis().set(sessionKey(asString), sessionValue({ id: 9_100_005, role: 'user', email: 's@surge.test' }, Date.now() + HOUR_MS), 'PX', 60_000);
    await redis().hset(sessionKey(asHash), 'uid', 9_100_006, 'role', 'user', 'email', 'h@surge.test', 'exp', Date.now() + HOUR_MS);

    // Act
    for (const handle of [asString, asHash]) {
      const signedOut = await deleteCurrentSession(
        httpEvent('get-me', { method: 'DELETE', path: '/sessions/current', cookies: [`sid=${cookieValue(handle)}`] }),
        lambdaContext(),
      );
      expect(signedOut.statusCode).toBe(204);
    }

    // Assess
    expect((await Promise.all([me(asString), me(asHash)])).map((r) => r.statusCode)).toEqual([401, 401]);
  });
});
