import { redis } from '../clients/redis';
import { faultPoint } from '../faults';
import { logger } from '../logger';
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
  const flags = (await claimScript.run(redis(), [keys.outbox, keys.claimed], ids)) as number[];
  return new Set(ids.filter((_, i) => flags[i] === 1));
}

/** Stored reservations leave the outbox and the claimed set. */
export async function settleWritten(keys: OutboxKeys, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await redis().multi().hdel(keys.outbox, ...ids).srem(keys.claimed, ...ids).exec();
}

export async function pendingRecords<T>(keys: OutboxKeys): Promise<T[]> {
  return (await redis().hvals(keys.outbox)).map((raw) => JSON.parse(raw) as T);
}

/** Groups records by their owner, e.g. orders by item, so each owner's outbox is touched once. */
function groupBy<T>(records: T[], ownerOf: (record: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const record of records) {
    const owner = ownerOf(record);
    const group = groups.get(owner);
    if (group) group.push(record);
    else groups.set(owner, [record]);
  }
  return groups;
}

/** How one kind of reservation is found in its owner's outbox. */
export interface ReservationKind<T> {
  name: string;
  idOf(record: T): string;
  ownerOf(record: T): string;
  keysOf(owner: string): OutboxKeys;
}

/**
 * The writer's whole job for one kind of reservation: claim the pending ones (those whose outbox
 * entry is gone were compensated or already stored, and are dropped), store them in one batch,
 * fall back to one at a time if the batch fails, and settle what was stored. Returns the ids
 * that could not be stored, to be retried by the queue.
 */
export async function storeClaimed<T>(records: T[], kind: ReservationKind<T>, store: (batch: T[]) => Promise<void>): Promise<Set<string>> {
  const unique = [...new Map(records.map((r) => [kind.idOf(r), r])).values()];
  const claimed = (
    await Promise.all(
      [...groupBy(unique, kind.ownerOf)].map(async ([owner, group]) => {
        const pending = await claimPending(kind.keysOf(owner), group.map(kind.idOf));
        return group.filter((r) => pending.has(kind.idOf(r)));
      }),
    )
  ).flat();
  if (claimed.length < unique.length) {
    // Compensated or already stored, as a rule; after a cache failover that lost writes, these
    // are the ones reconciliation will report.
    logger.info(`Dropped ${kind.name} no longer pending`, { count: unique.length - claimed.length });
  }
  if (claimed.length === 0) return new Set();

  const failed = new Set<string>();
  try {
    await store(claimed);
  } catch (error) {
    logger.warn(`Batch of ${kind.name} failed; storing one by one`, { count: claimed.length, error: error as Error });
    for (const record of claimed) {
      await store([record]).catch((single: Error) => {
        logger.error(`One of the ${kind.name} could not be stored`, { id: kind.idOf(record), error: single });
        failed.add(kind.idOf(record));
      });
    }
  }
  faultPoint('writer-after-commit');
  const stored = claimed.filter((r) => !failed.has(kind.idOf(r)));
  await Promise.all([...groupBy(stored, kind.ownerOf)].map(([owner, group]) => settleWritten(kind.keysOf(owner), group.map(kind.idOf))));
  return failed;
}
