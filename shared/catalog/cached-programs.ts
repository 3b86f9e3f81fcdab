import { cache } from '../cache/cache';
import { loadProgramPage, normaliseQuery, type ProgramPage, type ProgramQuery } from './programs';

/** Every catalog key carries the hash tag {catalog}: one slot for the version and its entries. */
const VERSION_KEY = '{catalog}:version';
const PREFIX = '{catalog}:programs:';
const CACHE = { ttlSeconds: 300, jitter: 0.1, staleSeconds: 60, leaseMs: 5_000, maxWaitMs: 10_000, earlyRefreshBeta: 1 };

export function programPage(q: ProgramQuery): Promise<ProgramPage> {
  return cache.getOrFill({ versionKey: VERSION_KEY, prefix: PREFIX, suffix: normaliseQuery(q) }, CACHE, () => loadProgramPage(q));
}

/** After every committed admin write: readers move to a new key space, so none sees the old list. */
export function catalogChanged(): Promise<number> {
  return cache.bumpVersion(VERSION_KEY);
}
