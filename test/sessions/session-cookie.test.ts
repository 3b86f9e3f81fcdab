import { describe, expect, it } from 'vitest';
import { parseSessionCookie } from '../../shared/sessions/store';

describe('parseSessionCookie', () => {
  it('reads a user id and a 128-bit session id', () => {
    expect(parseSessionCookie('42.AAAAAAAAAAAAAAAAAAAAAA')).toEqual({ userId: 42, sessionId: 'AAAAAAAAAAAAAAAAAAAAAA' });
  });

  it.each([
    undefined,
    '',
    '42',
    '42.short',
    '0.AAAAAAAAAAAAAAAAAAAAAA',
    '-1.AAAAAAAAAAAAAAAAAAAAAA',
    '42.AAAAAAAAAAAAAAAAAAAAA{',
    '{user:1}.AAAAAAAAAAAAAAAAAAAAAA',
    '42.AAAAAAAAAAAAAAAAAAAAAA.extra',
    '12345678901234567.AAAAAAAAAAAAAAAAAAAAAA',
  ])('rejects %j without asking Redis', (value) => {
    expect(parseSessionCookie(value)).toBeUndefined();
  });
});
