import { describe, expect, it } from 'vitest';
import { hashPassword, verifyPassword } from '../../shared/sessions/password';

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
    expect(await verifyPassword('anything', undefined)).toBe(false);
  });

  it('refuses a malformed stored hash', async () => {
    expect(await verifyPassword('x', 'md5$abc')).toBe(false);
  });
});
