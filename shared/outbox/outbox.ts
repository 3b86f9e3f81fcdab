import { redis } from '../clients/redis';
import { luaScript } from '../redis/script';

const claimScript = luaScript<[outbox: string, claimed: string], string[]>(new URL('./lua/outbox-claim-2.lua', import.meta.url));

/**
 * The pending reservations of one owner (an item's orders, a deal's coupons): a hash of records
 * kept until the writer has stored them, and the set of those the writer has claimed.
 */
export interface OutboxKeys {
  outbox: string;
  claimed: string;
}

/** Claims reservations for writing; returns the ids still pending (the others are dropped). */
export async function claimPending(keys: OutboxKeys, ids: string[]): Promise<Set<string>> {
  const flags = (await claimScript.run(redis, [keys.outbox, keys.claimed], ids)) as number[];
  return new Set(ids.filter((_, i) => flags[i] === 1));
}

/** Stored reservations leave the outbox and the claimed set. */
export async function settleWritten(keys: OutboxKeys, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await redis.multi().hdel(keys.outbox, ...ids).srem(keys.claimed, ...ids).exec();
}

export async function pendingRecords<T>(keys: OutboxKeys): Promise<T[]> {
  return (await redis.hvals(keys.outbox)).map((raw) => JSON.parse(raw) as T);
}

/** Groups records by their owner, e.g. orders by item, so each owner's outbox is touched once. */
export function groupBy<T>(records: T[], ownerOf: (record: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const record of records) {
    const owner = ownerOf(record);
    const group = groups.get(owner);
    if (group) group.push(record);
    else groups.set(owner, [record]);
  }
  return groups;
}
