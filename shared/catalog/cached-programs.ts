import { cache } from '../cache/cache';
import type { JsonText } from '../platform/http/response';
import {
  insertProgram,
  loadProgramPage,
  normaliseQuery,
  updateProgram,
  type Program,
  type ProgramInput,
  type ProgramPage,
  type ProgramQuery,
} from './programs';

/** Every catalog key carries the hash tag {catalog}: one slot for the version and its entries. */
const VERSION_KEY = '{catalog}:version';
const PREFIX = '{catalog}:programs:';
/**
 * A waiter gives up after 8 s, before its function's 10 s timeout, so its client is told 503 (retry)
 * rather than a timeout's 500. Exported for load/chaos, which holds a stampede's fills to one per lease.
 */
export const CATALOG_CACHE = { ttlSeconds: 300, jitter: 0.1, staleSeconds: 60, leaseMs: 5_000, maxWaitMs: 8_000, earlyRefreshBeta: 1 };

/** The page as its JSON response body, straight from the cache on a hit; a fill's query ends before the invocation's deadline, asked only by a fill. */
export function programPageJson(q: ProgramQuery, deadline?: () => number): Promise<JsonText<ProgramPage>> {
  // The cache keeps text: what it holds under this key is only ever the fill's JSON of a page.
  return cache().getOrFill({ versionKey: VERSION_KEY, prefix: PREFIX, suffix: normaliseQuery(q) }, CATALOG_CACHE, async () =>
    JSON.stringify(await loadProgramPage(q, deadline)),
  ) as Promise<JsonText<ProgramPage>>;
}

/** After every committed admin write: readers move to a new key space, so none sees the old list. */
export function catalogChanged(): Promise<string> {
  return cache().bumpVersion(VERSION_KEY);
}

/** Adds a program, then moves readers off the cached pages that lack it. */
export async function createProgram(input: ProgramInput): Promise<Program> {
  const program = await insertProgram(input);
  await catalogChanged();
  return program;
}

/** Changes a program, then moves readers off the cached pages that show it as it was; undefined when there is no such program. */
export async function changeProgram(id: number, input: ProgramInput): Promise<Program | undefined> {
  const program = await updateProgram(id, input);
  if (program) await catalogChanged();
  return program;
}
