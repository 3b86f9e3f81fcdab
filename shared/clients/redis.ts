import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { readEnv, redisEnv } from '../config';

const { REDIS_URL, REDIS_CLUSTER } = readEnv(redisEnv);

const options: RedisOptions = {
  // A request must not hang while Redis is away; callers turn the rejection into a 503 or a fallback.
  maxRetriesPerRequest: 1,
  enableOfflineQueue: true,
  connectTimeout: 2_000,
};

function cluster(): Redis {
  const url = new URL(REDIS_URL);
  const tls = url.protocol === 'rediss:' ? { tls: {} } : {};
  // Typed as Redis for the commands used here; every script's keys share a hash tag, so one slot.
  return new Cluster([{ host: url.hostname, port: Number(url.port || 6379) }], {
    dnsLookup: (address, callback) => callback(null, address),
    redisOptions: { ...options, ...tls, password: decodeURIComponent(url.password) || undefined },
  }) as unknown as Redis;
}

/** One connection per Lambda instance, reused by every invocation it serves. */
export const redis: Redis = REDIS_CLUSTER ? cluster() : new Redis(REDIS_URL, options);
