import { createHash } from 'node:crypto';
import type { ParsedMail } from './parse';

export interface NewsletterIdentity {
  kind: 'list-id' | 'sender';
  /** The List-Id, or the sender's address, lower-cased. */
  value: string;
  /** Whether SES authenticated the From domain (verdicts.ts, senderAuthenticated). */
  authenticated: boolean;
  /**
   * SHA-256 of kind, value, (for a List-Id) the sender's domain and whether the sender was
   * authenticated: the unique key in MySQL and the cache key.
   */
  key: string;
  /** The name this mail gives the newsletter; each reader sees the name of the mail they received. */
  name: string;
}

const domainOf = (address: string) => address.slice(address.lastIndexOf('@') + 1);

/**
 * A newsletter is its List-Id when it has one, otherwise whoever sends it. Anyone can write any
 * List-Id, so a List-Id counts only together with the sender's domain: a stranger's mail claiming
 * a well-known list's id lands in a newsletter of its own, not in the real one. And anyone can
 * write any From: the domain counts only when SES authenticated it, so unauthenticated mail is
 * kept among unauthenticated newsletters, never joining or renaming an authenticated one. (The
 * authenticated key is the one used before senders were checked, so readers keep their newsletters.)
 */
export function identify(mail: Pick<ParsedMail, 'listId' | 'listName' | 'from'>, { authenticated }: { authenticated: boolean }): NewsletterIdentity {
  const [kind, value] = mail.listId ? (['list-id', mail.listId] as const) : (['sender', mail.from.address] as const);
  const scope = kind === 'list-id' ? `:${domainOf(mail.from.address)}` : '';
  const key = createHash('sha256')
    .update(`${authenticated ? '' : 'unauthenticated:'}${kind}:${value}${scope}`)
    .digest('hex');
  const name = (kind === 'list-id' ? mail.listName : undefined) || mail.from.name || value;
  return { kind, value, authenticated, key, name: name.slice(0, 200) };
}
