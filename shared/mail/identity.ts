import { createHash } from 'node:crypto';
import type { ParsedMail } from './parse';

export interface NewsletterIdentity {
  kind: 'list-id' | 'sender';
  /** The List-Id, or the sender's address, lower-cased. */
  value: string;
  /** SHA-256 of kind and value: the unique key in MySQL and the cache key. */
  key: string;
  name: string;
}

/** A newsletter is its List-Id when it has one; otherwise whoever sends it. */
export function identify(mail: Pick<ParsedMail, 'listId' | 'listName' | 'from'>): NewsletterIdentity {
  const [kind, value] = mail.listId ? (['list-id', mail.listId] as const) : (['sender', mail.from.address] as const);
  const key = createHash('sha256').update(`${kind}:${value}`).digest('hex');
  const name = (kind === 'list-id' ? mail.listName : undefined) || mail.from.name || value;
  return { kind, value, key, name: name.slice(0, 200) };
}
