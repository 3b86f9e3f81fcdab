import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisPair, type RedisPair } from '../../infra/twin/faults/redis-pair';
import { redisCommand } from '../../infra/twin/faults/redis-server';
import { until } from '../../shared/platform/wait';

describe('a Redis pair failing over with its replication held back', () => {
  let pair: RedisPair;
  let client: Redis;

  beforeAll(async () => {
    pair = await startRedisPair();
    // A client of the endpoint, as the functions are: it reconnects wherever the endpoint leads.
    client = new Redis(pair.url, { maxRetriesPerRequest: 1, retryStrategy: () => 100 });
    client.on('error', () => undefined);
  });

  afterAll(async () => {
    client.disconnect();
    await pair.stop();
  });

  it('refuses writes on a primary whose replica is gone, until a replacement has synced', async () => {
    // Prepare
    await client.set('alone', 'before');
    await pair.synced();

    // Act
    await pair.killReplica();
    const alone = await until(
      async () =>
        client.set('alone', 'refused').then(
          () => undefined,
          (error: Error) => error.message,
        ),
      30_000,
      'a write refused',
    );
    await pair.replaceReplica();
    const replaced = await client.set('alone', 'after');
    // Replication is asynchronous: the replica holds the write once it has caught up, not when the primary answers.
    await pair.synced();

    // Assess
    expect(alone).toMatch(/^NOREPLICAS/);
    expect(replaced).toBe('OK');
    expect(await redisCommand(pair.replica.port, 'GET', 'alone')).toBe('after');
  });

  it('loses on the promoted replica the writes the primary acknowledged while the link was held, and keeps those before', async () => {
    // Prepare
    await client.set('before', 'replicated');
    await pair.synced();
    pair.holdReplication();
    await client.set('during', 'acknowledged');
    expect(await redisCommand(pair.primary.port, 'GET', 'during')).toBe('acknowledged');

    // Act
    await pair.failOver();
    await until(async () => (await client.set('after', 'taken').catch(() => undefined)) === 'OK', 60_000, 'a write through the endpoint');

    // Assess
    expect(await client.get('before')).toBe('replicated');
    expect(await client.get('during')).toBeNull();
    expect(await redisCommand(pair.primary.port, 'GET', 'after')).toBe('taken');
    expect(String(await redisCommand(pair.primary.port, 'INFO', 'replication'))).toMatch(/role:master/);
  });
});
