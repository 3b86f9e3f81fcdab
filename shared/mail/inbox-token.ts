import { randomBytes } from 'node:crypto';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
const TOKEN_LENGTH = 20;
const TOKEN = /^[a-z2-7]{20}$/;

/** 100 random bits in lower-case base32: safe in a local part, unaffected by case folding. */
export function newInboxToken(): string {
  const bytes = randomBytes(TOKEN_LENGTH);
  let token = '';
  for (const byte of bytes) token += ALPHABET[byte & 31];
  return token;
}

/** The token of an address at our domain, or undefined for any other address or a malformed one. */
export function inboxTokenOf(address: string, domain: string): string | undefined {
  const at = address.lastIndexOf('@');
  if (at <= 0) return undefined;
  const local = address.slice(0, at).toLowerCase();
  return address.slice(at + 1).toLowerCase() === domain && TOKEN.test(local) ? local : undefined;
}

export const inboxAddress = (token: string, domain: string) => `${token}@${domain}`;
