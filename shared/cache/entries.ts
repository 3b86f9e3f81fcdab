/**
 * Where an entry lives: `<prefix>e<version>:<suffix>`, read together with the version in
 * `versionKey`. Prefix and version key must carry the same hash tag (one cluster slot).
 */
export interface CacheKey {
  versionKey: string;
  prefix: string;
  suffix: string;
}

export interface Entry {
  value: string;
  /** Logical expiry, ms since the epoch (jittered). */
  expires: number;
  /** How long the fill took, ms: XFetch's δ. */
  delta: number;
}

/**
 * `e` marks the entry's format (one string, see encodeEntry), and with it the fill channel's name:
 * a format change takes a new marker, so while a deploy runs old and new instances side by side
 * neither reads the other's entries or wakes on the other's fills.
 */
export const entryKeyOf = (key: CacheKey, version: string) => `${key.prefix}e${version}:${key.suffix}`;
/** The entry's lease and fill channel carry its hash tag, so a fill's writes and wake-up stay on its shard. */
export const leaseKeyOf = (entryKey: string) => `${entryKey}:lease`;
export const channelOf = (entryKey: string) => `${entryKey}:filled`;

/**
 * An entry is one string, `<expires>:<delta>:<value>`: it is read with the version in one plain
 * MGET (no script, no hash), and the value is a slice of what Redis sent, not a copy.
 */
export const encodeEntry = (entry: Entry) => `${entry.expires}:${entry.delta}:${entry.value}`;

export function decodeEntry(raw: string): Entry {
  const first = raw.indexOf(':');
  const second = raw.indexOf(':', first + 1);
  return { expires: Number(raw.slice(0, first)), delta: Number(raw.slice(first + 1, second)), value: raw.slice(second + 1) };
}
