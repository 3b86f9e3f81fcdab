import { randomBytes } from 'node:crypto';
import type { RowDataPacket } from 'mysql2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../infra/twin/services/processes';
import { redis } from '../../shared/platform/clients/redis';
import { httpEvent, lambdaContext } from '../support/events';
import { sql } from '../support/orders';
import { route } from '../support/routes';

const createUser = await route('create-user');

describe('sign-up while the session store is away', () => {
  beforeAll(async () => {
    // Nothing listens there, so every Redis command fails, as while the cache fails over.
    process.env.REDIS_URL = `redis://127.0.0.1:${await freePort()}`;
  });
  afterAll(() => redis().disconnect());

  it('still makes the account and answers 201, without a cookie, for the client to sign in', async () => {
    const email = `away-${randomBytes(4).toString('hex')}@surge.test`;

    const result = await createUser(
      httpEvent('post-sessions', { method: 'POST', path: '/users', body: { email, password: 'a long enough passphrase' } }),
      lambdaContext(),
    );

    const rows = await sql<RowDataPacket>('SELECT id FROM users WHERE email = ?', [email]);
    expect(result.statusCode).toBe(201);
    expect(JSON.parse(result.body!)).toEqual({ user: { id: Number(rows[0]!.id), email, role: 'user' } });
    expect(result.cookies).toBeUndefined();
  });
});
