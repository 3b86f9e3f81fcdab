import { randomBytes } from 'node:crypto';
import type { RowDataPacket } from 'mysql2';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { putSecrets } from '../../infra/twin/secrets';
import { hashPassword } from '../../shared/sessions/password';
import { httpEvent, lambdaContext } from '../support/events';
import { createUser } from '../support/factories';
import { sql } from '../support/orders';
import { route } from '../support/routes';

const createSession = await route('create-session');

/**
 * The deploy trigger's second job, through its handler as the stack runs it: the secret its
 * environment names is looked up in the emulator's Secrets Manager stand-in at cold start.
 */
describe('the first admin, created by the deploy trigger', () => {
  afterEach(() => {
    delete process.env.FIRST_ADMIN_SECRET_ID;
  });

  /** A secret of the test's own (an instance keeps what it looked up), named in the trigger's environment. */
  async function deployWith(credentials: { email: string; password: string }) {
    const secretId = `test/first-admin-${randomBytes(4).toString('hex')}`;
    await putSecrets(process.env.AWS_ENDPOINT_URL!, { [secretId]: JSON.stringify(credentials) });
    process.env.FIRST_ADMIN_SECRET_ID = secretId;
  }
  /** Each deploy runs the trigger in an instance of its own, which reads its environment at its first invocation. */
  async function runTrigger() {
    vi.resetModules();
    const { handler } = await import('../../functions/migrate-database');
    return handler({}, lambdaContext('surge-migrate-database'));
  }
  const signIn = (email: string, password: string) => createSession(httpEvent('post-sessions', { body: { email, password } }), lambdaContext());
  const usersWith = (email: string) => sql<RowDataPacket>('SELECT role, password_hash FROM users WHERE email = ?', [email]);

  it('is created as an admin, under its normalised address, on the first deploy, and can sign in', async () => {
    // Prepare
    const email = `first-admin-${randomBytes(4).toString('hex')}@surge.test`;
    const password = randomBytes(24).toString('base64url');
    await deployWith({ email: ` ${email.toUpperCase()}`, password });

    // Act
    const result = await runTrigger();
    const signedIn = await signIn(email, password);

    // Assess
    expect(result).toEqual({ applied: [], firstAdmin: 'created' });
    expect((await usersWith(email)).map((u) => u.role)).toEqual(['admin']);
    expect(signedIn.statusCode).toBe(201);
    expect(JSON.parse(signedIn.body!).user).toMatchObject({ email, role: 'admin' });
  });

  it('is left as it is on later deploys, a password changed since included', async () => {
    // Prepare: deployed once, then the admin's password changed.
    const email = `first-admin-${randomBytes(4).toString('hex')}@surge.test`;
    const password = randomBytes(24).toString('base64url');
    await deployWith({ email, password });
    await runTrigger();
    const changed = 'a password chosen later';
    await sql('UPDATE users SET password_hash = ? WHERE email = ?', [await hashPassword(changed), email]);

    // Act
    const again = await runTrigger();

    // Assess
    expect(again).toEqual({ applied: [], firstAdmin: 'exists' });
    expect(await usersWith(email)).toHaveLength(1);
    expect((await signIn(email, changed)).statusCode).toBe(201);
    expect((await signIn(email, password)).statusCode).toBe(401);
  });

  it('fails the deploy rather than promote an account that is not an admin', async () => {
    // Prepare: someone signed up with the address first.
    const user = await createUser('user');
    await deployWith({ email: user.email, password: randomBytes(24).toString('base64url') });

    // Act
    const trigger = runTrigger();

    // Assess
    await expect(trigger).rejects.toThrow(`The first admin's address ${user.email} belongs to an account that is not an admin`);
    expect((await usersWith(user.email)).map((u) => u.role)).toEqual(['user']);
    expect((await signIn(user.email, user.password)).statusCode).toBe(201);
  });

  it.each([
    ['no password', { email: 'nopassword@surge.test' }, "The first admin's secret has no email and password"],
    ['an address that is not one', { email: 'not an address', password: 'p'.repeat(32) }, "The first admin's address is not an email address"],
  ])('fails the deploy on a secret with %s', async (_, secret, message) => {
    await deployWith(secret as { email: string; password: string });

    await expect(runTrigger()).rejects.toThrow(message);
  });

  it('only migrates where no secret names a first admin', async () => {
    expect(await runTrigger()).toEqual({ applied: [] });
  });
});
