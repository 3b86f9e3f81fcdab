import { db } from './clients/mysql';
import { redis } from './clients/redis';
import { sqsCall } from './clients/sqs-calls';
import { reservationQueueEnv, readEnv } from './config';
import { logger } from './logger';
import { once } from './once';

const queueUrl = once(() => readEnv(reservationQueueEnv).RESERVATION_QUEUE_URL);
const CHECK_TIMEOUT_MS = 1_500;
/**
 * How long an instance answers from its last check: a flood of health checks costs one ping, one
 * query and one queue call per instance this often, not one of each per request.
 */
export const CHECK_CACHE_MS = 5_000;

/**
 * The database is asked a query, whose driver this function so carries: behind RDS Proxy, as the
 * stack deploys it, anything less (the server's greeting) is answered by the proxy while Aurora is
 * down. The driver is evaluated at the first check, not at import (clients/mysql.ts).
 */
const checks = {
  redis: () => redis().ping(),
  database: () => db().query('SELECT 1'),
  queue: () => sqsCall()('GetQueueAttributes', { QueueUrl: queueUrl(), AttributeNames: ['QueueArn'] }),
};
type Dependency = keyof typeof checks;
const names = Object.keys(checks) as Dependency[];

export interface Health {
  checkedAt: string;
  down: Dependency[];
  /** 'ok', or what failed: AWS's and the stores' error text, which may name ARNs and hosts, so only for the logs and admins. */
  dependencies: Record<Dependency, string>;
}

async function probe(check: () => Promise<unknown>): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([check(), timeout]);
    return 'ok';
  } catch (error) {
    return `down: ${(error as Error).message || (error as Error).name}`;
  } finally {
    clearTimeout(timer);
  }
}

async function checkAll(): Promise<Health> {
  const results = await Promise.all(names.map((name) => probe(checks[name])));
  const dependencies = Object.fromEntries(names.map((name, i) => [name, results[i]])) as Record<Dependency, string>;
  const down = names.filter((name) => dependencies[name] !== 'ok');
  // Once per check, not per request: the detail the public answer leaves out.
  if (down.length) logger.warn('Dependencies down', { down, dependencies });
  return { checkedAt: new Date().toISOString(), down, dependencies };
}

let last: { startedAt: number; check: Promise<Health> } | undefined;

/** The instance's last check of Redis, MySQL and the queue while it is fresh (concurrent requests share one in flight), else a new one. */
export function dependencyHealth(): Promise<Health> {
  const now = Date.now();
  if (!last || now - last.startedAt >= CHECK_CACHE_MS) last = { startedAt: now, check: checkAll() };
  return last.check;
}
