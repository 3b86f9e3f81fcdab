import slotOf from 'cluster-key-slot';
import { redis } from '../platform/clients/redis';
import { UnavailableError } from '../platform/errors';
import { faultPoint } from '../platform/faults';
import { BucketCode } from './codes';
import { luaScript } from '../platform/redis/script';
import { newReservationId } from './ids';
import type { OwnerKeys } from './kind';

/**
 * One hot owner beyond one shard: its units split into buckets, each on a hash slot of its own.
 * A buyer always reserves in one bucket (bucketOf), so their limit, idempotency records and rates
 * stay in one slot; a bucket that runs dry takes units from the others by moves of two steps, one
 * script in one slot each (move-out-2.lua at the donor; at the recipient move-in-2.lua, or the
 * buyer's reserving script for the move made for that buyer), recorded at the donor until taken
 * in, so every unit is always in exactly one place reconciliation looks.
 */

export const MAX_BUCKETS = 16;
const SLOTS = 16384;

const tagsCache = new Map<string, string[]>();

/**
 * The hash tags of an owner split into `count` buckets: `{<base>}` alone when it is not (the keys
 * of an owner never split). Otherwise bucket k is `{<base>#k.i}`, with the first i whose slot lies
 * in the middle half of the k-th of `count` equal ranges of the 16384 slots: the buckets spread
 * evenly over a cluster whose shards split the slots evenly (`redis-cli --cluster create` does,
 * so 3 buckets on 3 masters land one on each), whichever way it rounds a range's edges.
 */
export function bucketTags(base: string, count: number): string[] {
  if (count === 1) return [`{${base}}`];
  const cacheKey = `${count} ${base}`;
  let tags = tagsCache.get(cacheKey);
  if (!tags) {
    const width = SLOTS / count;
    tags = Array.from({ length: count }, (_, k) => {
      const [low, high] = [k * width + width / 4, k * width + (3 * width) / 4];
      for (let i = 0; ; i++) {
        const slot = slotOf(`{${base}#${k}.${i}}`);
        if (slot >= low && slot < high) return `{${base}#${k}.${i}}`;
      }
    });
    tagsCache.set(cacheKey, tags);
  }
  return tags;
}

/** The bucket a buyer always reserves in: a mixing hash of the id, so consecutive ids spread over the buckets. */
export function bucketOf(buyer: number, count: number): number {
  let x = buyer % 2 ** 32;
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d);
  x = Math.imul(x ^ (x >>> 15), 0x846ca68b);
  return ((x ^ (x >>> 16)) >>> 0) % count;
}

/** `units` split over `count` buckets as evenly as whole units allow, the first ones taking the remainder. */
export function splitUnits(units: number, count: number): number[] {
  return Array.from({ length: count }, (_, k) => Math.floor(units / count) + (k < units % count ? 1 : 0));
}

const moveOutScript = luaScript<[state: string, moves: string], [string, number, number, number]>(new URL('./lua/move-out-2.lua', import.meta.url));
const moveInScript = luaScript<[state: string, movedIn: string], [number]>(new URL('./lua/move-in-2.lua', import.meta.url));

/** A move recorded at its donor: started, perhaps taken in, not yet cleared. */
export interface Move {
  id: string;
  from: number;
  to: number;
  units: number;
}

/** The moves a donor's record holds, from its id/record pairs. */
export function parseMoves(from: number, flat: string[]): Move[] {
  return Array.from({ length: flat.length / 2 }, (_, i) => {
    // The record's third field, when the move started, is for whoever reads Redis by hand.
    const [to, units] = flat[2 * i + 1]!.split('|').map(Number) as [number, number];
    return { id: flat[2 * i]!, from, to, units };
  });
}

/**
 * A move's second step and its record's clearing: idempotent, so the process that started it, a
 * buyer that found it in flight and a repair may all run it. Only ever forward: giving the units
 * back to the donor instead could not be made exclusive with a taking-in still on its way.
 * False when the recipient has no state (the move stays recorded until it is rebuilt).
 */
export async function finishMove(buckets: OwnerKeys[], move: Move): Promise<boolean> {
  const to = buckets[move.to]!;
  if (Number(await moveInScript.run(redis(), [to.state, to.movedIn(move.id)], [move.units])) !== 1) return false;
  await clearMove(buckets, move);
  return true;
}

/** Clears a move's record at its donor, once its recipient has taken it in. */
export async function clearMove(buckets: OwnerKeys[], move: Move): Promise<void> {
  await redis().hdel(buckets[move.from]!.moves, move.id);
}

/**
 * How long a buyer's refills may go on before it is told to retry (a retry-safe 503): well under
 * the functions' 10 s timeout, leaving time for the hand-off. Rounds are not counted: a buyer whose
 * bucket others keep draining needs a few, and the units its own refill moves are reserved for it
 * (see refill); only a Redis too slow to answer them in this time ends them here.
 */
export const REFILL_DEADLINE_MS = 4_000;

/**
 * What a refill found: false when the owner is sold out; otherwise the buyer's bucket may now have
 * the units, and `keep`, when there is one, is a move made for the buyer, which its next
 * reservation takes in as it reserves.
 */
export type Refill = false | { keep?: Move };

/** Refills in flight in this instance, by bucket and units needed. */
const refilling = new Map<string, Promise<Refill>>();

/**
 * What a buyer whose bucket ran dry does before being told SOLD_OUT (refillNow). The first time,
 * once at a time per bucket in an instance: the buyers of a dry bucket that ask meanwhile wait for
 * that refill rather than each pull units from the others (which would move them back and forth).
 * Its answer holds for them too: when it proves that nothing remained, nothing remains when they
 * are answered. The buyer that runs a refill keeps its largest move for its own reservation, which
 * takes it in as it reserves, so no other buyer's reservation or refill can take those units first
 * (only one that finds the move in flight finishes it into the bucket's stock); the waiters race
 * for the rest. A buyer that then still finds its bucket dry refills for itself (`alone`), so it
 * waits for another's refill at most once.
 */
export function refill(owner: string, buckets: OwnerKeys[], recipient: number, need: number, alone = false): Promise<Refill> {
  if (alone) return refillNow(owner, buckets, recipient, need);
  const key = `${buckets[recipient]!.state} ${need}`;
  const pending = refilling.get(key);
  if (pending) return pending.then((found) => found && {});
  const mine = refillNow(owner, buckets, recipient, need).finally(() => refilling.delete(key));
  refilling.set(key, mine);
  return mine;
}

/**
 * What a buyer whose bucket ran dry does before being told SOLD_OUT: takes units from the other
 * buckets (moves), or finishes the moves it finds in flight, or proves that none are left. The
 * proof is two rounds of reads: the first found no units and no move at any bucket, and the second
 * found no move step taken since at any of them (each step counts itself in its bucket's `moves`):
 * so the first round's reads are one consistent cut of the owner, and in it nothing remained. The
 * first round asks every donor at once (one round trip however many buckets), so near the end of
 * a sale, when every bucket is dry, a SOLD_OUT costs two round trips more than with one bucket.
 * The largest move it makes is left for the buyer's reservation to take in (`keep`); the others
 * are taken in here.
 */
async function refillNow(owner: string, buckets: OwnerKeys[], recipient: number, need: number): Promise<Refill> {
  const into = buckets[recipient]!;
  const moveId = newReservationId(owner);
  const donors = buckets.map((_, k) => k).filter((k) => k !== recipient);
  const [[[, state], [, own]], ...given] = await Promise.all([
    // The buyer's own bucket in one atomic read: its units, its count of move steps, and the moves it started itself.
    redis().multi().hmget(into.state, 'stock', 'moves').hgetall(into.moves).exec() as Promise<
      [[unknown, (string | null)[]], [unknown, Record<string, string>]]
    >,
    ...donors.map(
      (k) =>
        moveOutScript.run(redis(), [buckets[k]!.state, buckets[k]!.moves], [`${moveId}.${k}`, recipient, need, Date.now()]) as Promise<
          number | [number, number, string[]]
        >,
    ),
  ]);
  const [stock, moves] = state;
  if (stock === null || stock === undefined) throw new UnavailableError('A bucket of this sale is being repaired; retry');
  const seen = new Map<number, string | null | undefined>([[recipient, moves]]);
  const started: Move[] = [];
  const inFlight: Move[] = parseMoves(recipient, Object.entries(own).flat());
  given.forEach((reply, i) => {
    const donor = donors[i]!;
    if (reply === BucketCode.NoState) return; // lost with its units: a repair rebuilds it
    const [units, count, recorded] = reply as [number, number, string[]];
    if (units > 0) started.push({ id: `${moveId}.${donor}`, from: donor, to: recipient, units });
    seen.set(donor, String(count));
    inFlight.push(...parseMoves(donor, recorded));
  });
  if (started.length) {
    faultPoint('move-between-steps');
    const [keep, ...others] = started.sort((a, b) => b.units - a.units);
    if (!(await Promise.all(others.map((move) => finishMove(buckets, move)))).every(Boolean))
      throw new UnavailableError('A bucket of this sale is being repaired; retry');
    return { keep };
  }
  if (Number(stock) >= need) return {};
  if (inFlight.length) {
    // Units on their way to some bucket: finish the moves; the next round takes from where they land.
    await Promise.all(inFlight.map((move) => finishMove(buckets, move)));
    return {};
  }
  const again = await Promise.all([...seen.keys()].map(async (k) => [k, await redis().hmget(buckets[k]!.state, 'stock', 'moves')] as const));
  return again.some(([k, [units, count]]) => (count ?? '0') !== (seen.get(k) ?? '0') || Number(units ?? 0) >= (k === recipient ? need : 1)) ? {} : false;
}
