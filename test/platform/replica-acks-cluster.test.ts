/**
 * WAIT on a cluster (shared/platform/clients/replicas.ts): it has no key, so it must go to the primary
 * of the reservation's slot, over the connection the script used. On a cluster of three masters
 * with a replica each (the twin's, with replicas), one replica stopped (SIGSTOP) acknowledges
 * nothing: a write in its master's slot is not held, while one in another master's slot is.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from 'ioredis';
import slotOf from 'cluster-key-slot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { goodReplicas } from '../../infra/redis';
import { startRedisCluster } from '../../infra/twin/services/redis-cluster';
import { redisCommand } from '../../infra/twin/faults/redis-server';
import type { Service } from '../../infra/twin/services/services';
import { connectionTokenOf, replicasHold } from '../../shared/platform/clients/replicas';
import { until } from '../../shared/platform/wait';

/** The port of the master serving a key's slot, and the pid of its replica (from the master's CLUSTER NODES). */
async function ownerOf(cluster: Cluster, key: string): Promise<{ masterPort: number; replicaPid: number }> {
  const masterPort = Number(cluster.slots[slotOf(key)]![0]!.split(':')[1]);
  const lines = String(await redisCommand(masterPort, 'CLUSTER', 'NODES'))
    .trim()
    .split('\n')
    .map((line) => line.split(' '));
  const masterId = lines.find((fields) => fields[2]!.includes('myself'))![0]!;
  const replica = lines.find((fields) => fields[2]!.includes('slave') && fields[3] === masterId);
  if (!replica) throw new Error(`no replica of the master on ${masterPort}`);
  const replicaPort = Number(/:(\d+)@/.exec(replica[1]!)![1]);
  const server = String(await redisCommand(replicaPort, 'INFO', 'server'));
  return { masterPort, replicaPid: Number(/process_id:(\d+)/.exec(server)![1]) };
}

describe('replica acknowledgement on a cluster', () => {
  let stateDir: string;
  let service: Service;
  let cluster: Cluster;
  let goodReplicasAtStart: number[];

  beforeAll(async () => {
    stateDir = mkdtempSync(join(tmpdir(), 'surge-cluster-acks-'));
    // A cluster of its own, not the suite's Redis that REDIS_URL names.
    const suiteRedis = process.env.REDIS_URL;
    delete process.env.REDIS_URL;
    try {
      service = await startRedisCluster(stateDir, false, { replicas: 1 });
    } finally {
      process.env.REDIS_URL = suiteRedis;
    }
    const nodes = String(await redisCommand(Number(new URL(service.url).port), 'CLUSTER', 'NODES'))
      .trim()
      .split('\n');
    const masterPorts = nodes.filter((line) => line.split(' ')[2]!.includes('master')).map((line) => Number(/:(\d+)@/.exec(line)![1]));
    goodReplicasAtStart = await Promise.all(masterPorts.map(async (port) => goodReplicas(String(await redisCommand(port, 'INFO', 'replication')))));
    const url = new URL(service.url);
    cluster = new Cluster([{ host: url.hostname, port: Number(url.port) }], { scaleReads: 'master' });
    cluster.on('error', () => undefined);
    // Ready once it has the slots.
    await cluster.ping();
  }, 120_000);
  afterAll(async () => {
    cluster?.disconnect();
    await service?.stop();
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('takes writes as soon as it is started: every master counts its replica good, as min-replicas-to-write asks', () => {
    // Assess (read in beforeAll, before any client of the test's own had connected)
    expect(goodReplicasAtStart).toEqual([1, 1, 1]);
  });

  it('waits on the primary of the key’s slot: a stopped replica holds back its own master’s keys, not another’s', async () => {
    // Prepare: two keys on different masters, each written, and the replica of the first's master stopped.
    const stalled = '{acks-a}:order';
    const a = await ownerOf(cluster, stalled);
    const other = ['{acks-b}:order', '{acks-c}:order', '{acks-d}:order', '{acks-e}:order'].find(
      (key) => Number(cluster.slots[slotOf(key)]![0]!.split(':')[1]) !== a.masterPort,
    )!;
    await cluster.set(stalled, '1');
    await cluster.set(other, '1');
    expect(service.replicaAcks).toBe(1);
    // WAIT's 100 ms can pass on a busy machine before a healthy replica answers: held is waited for, not timed.
    const heldSoon = (key: string) => until(() => replicasHold(cluster, key, 1, connectionTokenOf(cluster, key)), 30_000, `a replica holding ${key}`);
    await heldSoon(stalled);
    process.kill(a.replicaPid, 'SIGSTOP');
    try {
      // Act
      await cluster.set(stalled, '2');
      await cluster.set(other, '2');
      const [heldStalled] = await Promise.all([replicasHold(cluster, stalled, 1, connectionTokenOf(cluster, stalled)), heldSoon(other)]);

      // Assess: the other master's replica held its write (waited for above); the stopped one cannot.
      expect(heldStalled).toBe(false);
    } finally {
      process.kill(a.replicaPid, 'SIGCONT');
    }
  });
});
