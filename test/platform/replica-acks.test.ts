/**
 * WAIT as the reservations use it (shared/platform/clients/replicas.ts), on a real primary and
 * replica (infra/twin/faults/redis-pair.ts): what a connection wrote is held once the replica has it, and
 * not while the replication link is held, however long the primary has acknowledged it.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisPair, type RedisPair } from '../../infra/twin/faults/redis-pair';
import { REPLICA_ACK_TIMEOUT_MS, replicasHold } from '../../shared/platform/clients/replicas';
import { until } from '../../shared/platform/wait';

describe('replica acknowledgement', () => {
  let pair: RedisPair;
  let client: Redis;

  beforeAll(async () => {
    pair = await startRedisPair();
    client = new Redis(pair.url, { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    client.disconnect();
    await pair.stop();
  });

  it('holds a write the replica has, and not one the link held back, until the link lets it through', async () => {
    // Prepare. A healthy replica's answer can miss WAIT's 100 ms on a busy machine: held is waited
    // for (asked again, as a buyer's retry would), never timed; not held is asked once.
    const heldSoon = (key: string) => until(() => replicasHold(client, key, 1, client.stream), 30_000, `the replica holding ${key}`);
    await client.set('{held}:first', '1');
    const first = await heldSoon('{held}:first');

    // Act: replication held, a second write acknowledged by the primary alone.
    pair.holdReplication();
    await client.set('{held}:second', '2');
    const startedAt = performance.now();
    const whileHeld = await replicasHold(client, '{held}:second', 1, client.stream);
    const waitedMs = performance.now() - startedAt;
    pair.resumeReplication();
    const afterwards = await heldSoon('{held}:second');

    // Assess
    expect(first).toBe(true);
    expect(whileHeld).toBe(false);
    expect(waitedMs).toBeGreaterThanOrEqual(REPLICA_ACK_TIMEOUT_MS - 5);
    expect(afterwards).toBe(true);
  });

  it('asks no more replicas than there are: two wanted of one is never held', async () => {
    // Act
    await client.set('{held}:third', '3');

    // Assess
    expect(await replicasHold(client, '{held}:third', 2, client.stream)).toBe(false);
  });

  it('shares one WAIT among the callers that ask while another is in flight, and holds each', async () => {
    // Prepare
    const waits = async () => Number(/cmdstat_wait:calls=(\d+)/.exec(String(await client.info('commandstats')))?.[1] ?? 0);
    const before = await waits();

    // Act: fifty reservations' writes over one connection, each then asking whether a replica holds it.
    const held = await Promise.all(
      Array.from({ length: 50 }, (_, i) => client.set(`{held}:many:${i}`, i).then(() => replicasHold(client, `{held}:many:${i}`, 1, client.stream))),
    );

    // Assess: fewer WAITs than callers; any not held at once (a busy machine) held when it asks again.
    expect(await waits()).toBeLessThan(before + 50);
    for (const [i, isHeld] of held.entries())
      if (!isHeld) await until(() => replicasHold(client, `{held}:many:${i}`, 1, client.stream), 30_000, `the replica holding {held}:many:${i}`);
  });

  it('holds nothing written over a connection since replaced: a reconnect between the write and the WAIT', async () => {
    // Prepare: a write, then the connection lost and made again, as a failover's reconnect does.
    await client.set('{held}:fourth', '4');
    const before = client.stream;
    client.disconnect(true);
    await until(async () => client.status === 'ready', 10_000, 'the client reconnected');

    // Act
    const held = await replicasHold(client, '{held}:fourth', 1, before);

    // Assess: the new connection wrote nothing, and its WAIT would say held at once.
    expect(await client.call('WAIT', 1, 100)).toBe(1);
    expect(held).toBe(false);
  });
});
