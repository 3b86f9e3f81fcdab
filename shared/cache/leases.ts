import { randomBytes } from 'node:crypto';
import { luaScript, type RedisClient } from '../platform/redis/script';
import { channelOf, encodeEntry, leaseKeyOf, type Entry } from './entries';

const fillScript = luaScript<[entry: string, lease: string], [token: string, entry: string, lifetimeMs: number, channel: string]>(
  new URL('./lua/cache-fill-2.lua', import.meta.url),
);
const releaseScript = luaScript<[lease: string], [token: string, channel: string]>(new URL('./lua/cache-release-1.lua', import.meta.url));

/**
 * The right to fill one entry, held by one caller across every instance (as in Facebook's memcache):
 * a holder that pauses past its lease cannot overwrite a newer value, and one that dies is replaced
 * when the lease runs out. Both ends wake the entry's waiters on its channel (sharded pub/sub).
 */
export class Leases {
  constructor(private readonly redis: RedisClient) {}

  /** The lease's token when this caller got it, undefined when another holds it. */
  async take(entryKey: string, leaseMs: number): Promise<string | undefined> {
    const token = randomBytes(12).toString('base64url');
    return (await this.redis.set(leaseKeyOf(entryKey), token, 'PX', leaseMs, 'NX')) === 'OK' ? token : undefined;
  }

  /** Gives a lease back unfilled, so a waiter takes over now rather than when it runs out. */
  async release(entryKey: string, token: string): Promise<void> {
    await releaseScript.run(this.redis, [leaseKeyOf(entryKey)], [token, channelOf(entryKey)]);
  }

  /** Stores the entry if the lease is still this token's, and wakes the waiters with it; true when stored. */
  async fill(entryKey: string, token: string, entry: Entry, physicalMs: number): Promise<boolean> {
    return (await fillScript.run(this.redis, [entryKey, leaseKeyOf(entryKey)], [token, encodeEntry(entry), physicalMs, channelOf(entryKey)])) === 1;
  }
}
