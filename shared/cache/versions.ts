import { logger } from '../platform/logger';
import { luaScript, type RedisClient } from '../platform/redis/script';

const bumpScript = luaScript<[version: string], [candidate: string]>(new URL('./lua/version-bump-1.lua', import.meta.url));
const raiseScript = luaScript<[version: string], [seen: string, candidate: string]>(new URL('./lua/version-raise-1.lua', import.meta.url));

/** The version of a key space never bumped, or whose version key Redis has lost. */
export const NO_VERSION = '0';

/**
 * Versions come from the clock, in microseconds, rather than a count: after Redis loses data (a
 * failover, a flush) a count would climb again through numbers an instance has already seen and
 * holds near copies for. Below 2^53 until the year 2255, so exact in Lua and in JavaScript.
 */
export const clockVersion = () => String(Math.floor((performance.timeOrigin + performance.now()) * 1000));

/** Version keys an instance remembers the last seen version of; past this it forgets the oldest. */
const REMEMBERED_VERSIONS = 10_000;

/**
 * The versions of key spaces as this instance last saw them in Redis. A bump moves readers to a
 * new key space; a version found lower than one seen is a bump Redis lost, and is raised past it.
 */
export class Versions {
  private readonly lastSeen = new Map<string, string>();

  constructor(private readonly redis: RedisClient) {}

  seen(versionKey: string): string {
    return this.lastSeen.get(versionKey) ?? NO_VERSION;
  }

  /**
   * The version to read under once Redis holds `actual` where this instance last saw `seen`. A
   * version below one seen is a bump Redis lost (versions only rise): its entries are from before
   * a committed write, so the instance raises the version past the one it saw and every instance
   * refills from the source. Only an instance that saw the lost version can tell; one that did not
   * serves the older entries until they expire (their TTL bounds a loss no instance saw).
   */
  async moveTo(versionKey: string, seen: string, actual: string): Promise<string> {
    let version = actual;
    if (Number(actual) < Number(seen)) {
      version = String(await raiseScript.run(this.redis, [versionKey], [seen, clockVersion()]));
      logger.warn('Cache version went back: Redis lost a bump; moved past it', { versionKey, seen, found: actual, now: version });
    }
    this.remember(versionKey, version);
    return version;
  }

  /** Gives a key space without a version one, unless another instance just did. */
  async ensure(versionKey: string): Promise<void> {
    await this.redis.set(versionKey, clockVersion(), 'NX');
  }

  async bump(versionKey: string): Promise<string> {
    return String(await bumpScript.run(this.redis, [versionKey], [clockVersion()]));
  }

  private remember(versionKey: string, version: string): void {
    this.lastSeen.delete(versionKey);
    this.lastSeen.set(versionKey, version);
    if (this.lastSeen.size > REMEMBERED_VERSIONS) this.lastSeen.delete(this.lastSeen.keys().next().value as string);
  }
}
