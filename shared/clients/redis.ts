import { Redis } from 'ioredis';
import { readEnv, redisEnv } from '../config';

const { REDIS_URL } = readEnv(redisEnv);

/** One connection per Lambda instance, reused by every invocation it serves. */
export const redis = new Redis(REDIS_URL, {
  // A request must not hang while Redis is away; callers turn the rejection into a 503 or a fallback.
  maxRetriesPerRequest: 1,
  enableOfflineQueue: true,
  connectTimeout: 2_000,
});
