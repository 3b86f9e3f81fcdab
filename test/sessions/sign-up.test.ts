import { randomBytes } from 'node:crypto';
import type { RowDataPacket } from 'mysql2';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { httpEvent, lambdaContext } from '../support/events';
import { sql } from '../support/orders';
import { signedInUsers } from '../support/sessions';
import { route } from '../support/routes';

const createSession = await route('create-session');
const createUser = await route('create-user');
const getMe = await route('get-me');

type Result = APIGatewayProxyStructuredResultV2;

const body = (result: Result) => JSON.parse(result.body ?? 'null');
const sidCookie = (result: Result) => result.cookies?.find((c) => c.startsWith('sid='))?.split(';')[0];
/** An address no other test uses. */
const freshEmail = (label = 'new') => `${label}-${randomBytes(4).toString('hex')}@surge.test`;
const PASSWORD = 'a long enough passphrase';

const signUp = (body: unknown, changes: Parameters<typeof httpEvent>[1] = {}) =>
  createUser(httpEvent('post-sessions', { method: 'POST', path: '/users', body, ...changes }), lambdaContext());

async function storedUsers(email: string) {
  return sql<RowDataPacket>('SELECT id, email, role, password_hash FROM users WHERE email = ?', [email]);
}

describe('sign-up', () => {
  it('creates a user, answers 201 with it, and signs it in with a session cookie', async () => {
    // Prepare
    const email = freshEmail();

    // Act
    const result = await signUp({ email, password: PASSWORD });
    const me = await getMe(httpEvent('get-me', { cookies: [sidCookie(result)!] }), lambdaContext());
    const signIn = await createSession(httpEvent('post-sessions', { body: { email, password: PASSWORD } }), lambdaContext());

    // Assess
    const [row] = await storedUsers(email);
    expect(result.statusCode).toBe(201);
    expect(body(result)).toEqual({ user: { id: Number(row!.id), email, role: 'user' } });
    expect(result.cookies![0]).toMatch(/^sid=\d+\.[A-Za-z0-9_-]{22}; Max-Age=43200; Path=\/; HttpOnly; SameSite=Lax$/);
    expect(body(me)).toEqual({ id: Number(row!.id), email, role: 'user' });
    expect(row!.password_hash).toMatch(/^scrypt\$/);
    expect(signIn.statusCode).toBe(201);
  });

  it('stores the address trimmed and lower-cased, so the same address in another form is taken', async () => {
    // Prepare
    const email = freshEmail('Mixed.Case+Tag');

    // Act
    const first = await signUp({ email: `  ${email.toUpperCase()}\t`, password: PASSWORD });
    const again = await signUp({ email: email.toLowerCase(), password: `other ${PASSWORD}` });
    const otherCase = await signUp({ email: ` ${email} `, password: `other ${PASSWORD}` });

    // Assess
    expect(first.statusCode).toBe(201);
    expect(body(first).user.email).toBe(email.toLowerCase());
    for (const taken of [again, otherCase]) {
      expect(taken.statusCode).toBe(409);
      expect(body(taken)).toEqual({ error: { code: 'EMAIL_TAKEN', message: 'An account with this email address exists already' } });
      expect(taken.cookies).toBeUndefined();
    }
    expect(await storedUsers(email.toLowerCase())).toHaveLength(1);
  });

  it('keeps dots and +tags: such addresses are accounts of their own', async () => {
    const base = freshEmail('dotted.name');
    const [local, domain] = base.split('@') as [string, string];

    const results = await Promise.all(
      [base, `${local.replace('.', '')}@${domain}`, `${local}+news@${domain}`].map((email) => signUp({ email, password: PASSWORD })),
    );

    expect(results.map((r) => r.statusCode)).toEqual([201, 201, 201]);
  });

  it('of 20 concurrent sign-ups of one address, accepts exactly one and answers the others 409', async () => {
    // Prepare
    const email = freshEmail('race');

    // Act
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => signUp({ email: i % 2 ? email.toUpperCase() : email, password: `${PASSWORD} ${i}` })),
    );

    // Assess
    const statuses = results.map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    expect(results.filter((r) => r.statusCode === 409).every((r) => body(r).error.code === 'EMAIL_TAKEN')).toBe(true);
    expect(await storedUsers(email)).toHaveLength(1);
  });

  it.each([
    ['11 characters', (_: string) => 'elevenchars', 'The password must be at least 12 characters long'],
    ['11 emoji (22 UTF-16 units)', (_: string) => '🔑'.repeat(11), 'The password must be at least 12 characters long'],
    ['129 characters', (_: string) => 'x'.repeat(129), 'The password must be at most 128 characters long'],
    ['the address itself', (email: string) => email, 'The password must not contain the email address'],
    ['the address in capitals, inside', (email: string) => `my ${email.toUpperCase()} pass`, 'The password must not contain the email address'],
    [
      "the address's local part",
      (email: string) => `${email.split('@')[0]!.toUpperCase()}-2026`,
      "The password must not contain the email address's local part",
    ],
  ])('refuses a password of %s with a 400 naming the rule', async (_, password, message) => {
    const email = freshEmail('policy');

    const result = await signUp({ email, password: password(email) });

    expect(result.statusCode).toBe(400);
    expect(body(result)).toEqual({
      error: { code: 'VALIDATION_FAILED', message: "The request's body is not valid", details: [{ path: 'body.password', message }] },
    });
    expect(await storedUsers(email)).toHaveLength(0);
  });

  it.each([
    ['12 characters', 'new', 'twelve chars'],
    ['12 emoji', 'new', '🔑'.repeat(12)],
    ['128 characters', 'new', 'y'.repeat(128)],
    ['a local part of 2 characters inside it', 'bo', 'bob is not a password'],
  ])('accepts a password of %s', async (_, localPart, password) => {
    const result = await signUp({ email: `${localPart}@${randomBytes(4).toString('hex')}.surge.test`, password });

    expect(result.statusCode).toBe(201);
  });

  it.each([
    ['a missing email', { body: { password: PASSWORD } }, 400, 'VALIDATION_FAILED'],
    ['a missing password', { body: { email: 'someone@surge.test' } }, 400, 'VALIDATION_FAILED'],
    ['a non-email', { body: { email: 'not-an-email', password: PASSWORD } }, 400, 'VALIDATION_FAILED'],
    ['an address with a space inside', { body: { email: 'some one@surge.test', password: PASSWORD } }, 400, 'VALIDATION_FAILED'],
    ['a number for a password', { body: { email: 'someone@surge.test', password: 123456789012 } }, 400, 'VALIDATION_FAILED'],
    ['an extra field', { body: { email: 'someone@surge.test', password: PASSWORD, role: 'admin' } }, 400, 'VALIDATION_FAILED'],
    ['an array', { body: [] }, 400, 'VALIDATION_FAILED'],
    ['malformed JSON', { rawBody: '{"email":' }, 400, 'BAD_JSON'],
    [
      'a non-JSON content type',
      { body: { email: 'someone@surge.test', password: PASSWORD }, headers: { 'content-type': 'text/plain' } },
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ],
  ])('answers %s with a JSON 4xx and creates nobody', async (_, changes, status, code) => {
    const result = await createUser(httpEvent('post-sessions', { method: 'POST', path: '/users', ...changes }), lambdaContext());

    expect(result.statusCode).toBe(status);
    expect(result.headers?.['content-type']).toMatch(/^application\/json/);
    expect(body(result).error).toMatchObject({ code, message: expect.any(String) });
    expect(await storedUsers('someone@surge.test')).toHaveLength(0);
  });

  it('ends the session presented at sign-up, as sign-in does', async () => {
    const [other] = await signedInUsers(1);

    const result = await signUp({ email: freshEmail(), password: PASSWORD }, { cookies: [other!.cookie] });

    expect(result.statusCode).toBe(201);
    expect((await getMe(httpEvent('get-me', { cookies: [other!.cookie] }), lambdaContext())).statusCode).toBe(401);
  });
});
