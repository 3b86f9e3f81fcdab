import type { Entry } from './entries';
import { NO_VERSION } from './versions';

/** Default bound on an instance's near copies, in characters of key and value (about bytes). */
export const NEAR_COPY_CHARS = 8 * 1024 * 1024;
/** What a copy costs beyond its key and value (its entry object and map slot), in the same units. */
const NEAR_COPY_OVERHEAD = 64;

const sizeOf = (entryKey: string, entry: Entry) => entryKey.length + entry.value.length + NEAR_COPY_OVERHEAD;

/**
 * Entries this instance has read or stored, kept beside Redis so that a hit asks Redis for the
 * version alone (a few bytes) instead of the entry. Otherwise every request for a hot page sends
 * its whole body out of one shard, and a shard's network is what a hot key exhausts first. A copy
 * is served only while its version is still the one in Redis (versions are never reused) and it is
 * not due for refresh. Bounded by the size of its keys and values; past the bound the oldest go first.
 */
export class NearCopies {
  private readonly copies = new Map<string, Entry>();
  private chars = 0;

  constructor(private readonly maxChars: number) {}

  get(entryKey: string): Entry | undefined {
    return this.copies.get(entryKey);
  }

  /**
   * Only under a version Redis holds: without one, a copy could not be told from an older list
   * after Redis lost its keys. An expired entry is not worth the room; it is re-read until refreshed.
   */
  keepUnder(version: string, entryKey: string, entry: Entry): void {
    if (version !== NO_VERSION && entry.expires > Date.now()) this.keep(entryKey, entry);
  }

  drop(entryKey: string): void {
    const copy = this.copies.get(entryKey);
    if (!copy) return;
    this.copies.delete(entryKey);
    this.chars -= sizeOf(entryKey, copy);
  }

  private keep(entryKey: string, entry: Entry): void {
    this.drop(entryKey);
    const size = sizeOf(entryKey, entry);
    // One copy taking much of the bound would evict everything else; such an entry is read from Redis.
    if (size > this.maxChars / 4) return;
    this.copies.set(entryKey, entry);
    this.chars += size;
    for (const [oldest, copy] of this.copies) {
      if (this.chars <= this.maxChars) break;
      this.copies.delete(oldest);
      this.chars -= sizeOf(oldest, copy);
    }
  }
}
