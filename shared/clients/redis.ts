import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { readEnv, redisEnv } from '../config';
import { logger } from '../logger';

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

/**
 * Logs a lost connection once per outage rather than on every reconnect attempt; without a
 * listener ioredis would print each one as an unhandled error event.
 */
export function reportErrors(client: Redis, name: string): Redis {
  let down = false;
  client.on('error', (error: Error) => {
    if (!down) logger.warn('Redis connection lost', { client: name, error: error.message });
    down = true;
  });
  client.on('ready', () => (down = false));
  return client;
}

/** One connection per Lambda instance, reused by every invocation it serves. */
export const redis: Redis = reportErrors(REDIS_CLUSTER ? cluster() : new Redis(REDIS_URL, options), 'commands');
