import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { readEnv, redisEnv } from '../config';
import { logger } from '../logger';
import { once } from '../once';
import { loadedSecret, refreshSecret } from './credentials';

const options: RedisOptions = {
  // A request must not hang while Redis is away; callers turn the rejection into a 503 or a fallback.
  maxRetriesPerRequest: 1,
  enableOfflineQueue: true,
  connectTimeout: 2_000,
};

function cluster(url: URL, password: string | undefined): Redis {
  const tls = url.protocol === 'rediss:' ? { tls: {} } : {};
  // Typed as Redis for the commands used here; every script's keys share a hash tag, so one slot.
  return new Cluster([{ host: url.hostname, port: Number(url.port || 6379) }], {
    dnsLookup: (address, callback) => callback(null, address),
    redisOptions: { ...options, ...tls, ...(password ? { password } : {}) },
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

/**
 * After a rotation the next connection's AUTH is refused: the token is looked up again once, and
 * ioredis's next reconnect presents the new one.
 */
function followRotation(client: Redis | Cluster, secretId: string): void {
  client.on('error', (error: Error) => {
    if (!/^(WRONGPASS|NOAUTH)/.test(error.message)) return;
    refreshSecret(secretId).then(
      (password) => {
        if (client instanceof Cluster) client.options.redisOptions = { ...client.options.redisOptions, password };
        else client.options.password = password;
      },
      (lookupError: Error) => logger.error('Redis AUTH token could not be looked up again', { error: lookupError.message }),
    );
  });
}

/**
 * Commands written while the event loop works through one round of I/O leave together, in one
 * write, when it next checks (setImmediate): one syscall for all the requests an instance has in
 * flight instead of one each. (ioredis's own auto-pipelining does this through pipelines, and
 * failed inside ioredis under a 1,000-way stampede; this only batches the socket's writes.)
 */
function coalesceWrites(client: Redis): Redis {
  client.on('connect', () => {
    const socket = client.stream;
    const write = socket.write.bind(socket);
    let corked = false;
    socket.write = ((...args: Parameters<typeof write>) => {
      if (!corked) {
        corked = true;
        socket.cork();
        setImmediate(() => {
          corked = false;
          socket.uncork();
        });
      }
      return write(...args);
    }) as typeof socket.write;
  });
  return client;
}

/** A new connection to the function's Redis, with the AUTH token its secret holds (or its URL, in the twin). */
export function connectRedis(): Redis {
  const { REDIS_URL, REDIS_CLUSTER, REDIS_AUTH_SECRET_ID } = readEnv(redisEnv);
  const url = new URL(REDIS_URL);
  const password = REDIS_AUTH_SECRET_ID ? loadedSecret(REDIS_AUTH_SECRET_ID) : decodeURIComponent(url.password) || undefined;
  const client = REDIS_CLUSTER ? cluster(url, password) : coalesceWrites(new Redis(REDIS_URL, { ...options, ...(password ? { password } : {}) }));
  if (REDIS_AUTH_SECRET_ID) followRotation(client, REDIS_AUTH_SECRET_ID);
  return client;
}

/** One connection per Lambda instance, made on first use and reused by every invocation it serves. */
export const redis = once(() => reportErrors(connectRedis(), 'commands'));
