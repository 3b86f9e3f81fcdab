import * as crypto from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { hashPassword, verifyPassword } from '../../shared/sessions/password';

// Every key derivation the module makes, seen without changing it: the work done is what is timed.
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  return { ...actual, scrypt: vi.fn(actual.scrypt) };
});

/** The scrypt cost parameters of each derivation `act` made. */
async function derivationsOf(act: () => Promise<unknown>): Promise<unknown[]> {
  const scrypt = vi.mocked(crypto.scrypt);
  scrypt.mockClear();
  await act();
  return scrypt.mock.calls.map((call) => call[3]);
}

describe('passwords', () => {
  it('verifies the right password and refuses others', async () => {
    const encoded = await hashPassword('s3cret-enough');

    expect(encoded).toMatch(/^scrypt\$16384\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(await verifyPassword('s3cret-enough', encoded)).toBe(true);
    expect(await verifyPassword('s3cret-enougH', encoded)).toBe(false);
  });

  it('salts each hash', async () => {
    expect(await hashPassword('same')).not.toBe(await hashPassword('same'));
  });

  it('refuses when there is no user, after doing the same work', async () => {
    // Prepare: the decoy hash is made once, at first use.
    const encoded = await hashPassword('s3cret-enough');
    await verifyPassword('warm-up', undefined);

    // Act
    const forUser = await derivationsOf(() => verifyPassword('wrong', encoded));
    const forNobody = await derivationsOf(async () => expect(await verifyPassword('anything', undefined)).toBe(false));

    // Assess: one derivation each, at the same cost.
    expect(forUser).toHaveLength(1);
    expect(forNobody).toEqual(forUser);
  });

  it('refuses a malformed stored hash', async () => {
    expect(await verifyPassword('x', 'md5$abc')).toBe(false);
  });
});
