import { Cluster, Redis } from 'ioredis';

/** A Redis master: where its counters and CPU are read, and which slots it serves. */
export interface Shard {
  name: string;
  client: Redis;
  slots: [number, number][];
}

export interface Shards {
  shards: Shard[];
  cluster: boolean;
  /** For keys: the cluster's client, or the one node's. */
  client: Redis | Cluster;
  /** 'single node' or 'cluster of N masters', for a bench's JSON. */
  shape: string;
  close(): void;
}

/** The masters behind a twin's Redis URL: the one node, or every master of its cluster. */
export async function shardsOf(url: string): Promise<Shards> {
  const probe = new Redis(url);
  const cluster = /cluster_enabled:1/.test(await probe.info('cluster'));
  if (!cluster) {
    return {
      shards: [{ name: new URL(url).port, client: probe, slots: [[0, 16383]] }],
      cluster,
      client: probe,
      shape: 'single node',
      close: () => probe.disconnect(),
    };
  }
  probe.disconnect();
  const nodes = new Cluster([url]);
  const ranges = (await nodes.cluster('SLOTS')) as unknown as [number, number, [string, number]][];
  await nodes.ping();
  const shards = nodes.nodes('master').map((client) => ({
    name: String(client.options.port),
    client,
    slots: ranges.filter((r) => r[2][1] === client.options.port).map((r) => [r[0], r[1]] as [number, number]),
  }));
  return { shards, cluster, client: nodes, shape: `cluster of ${shards.length} masters`, close: () => nodes.disconnect() };
}

/** A counter of INFO `section` (the first number `pattern` captures), summed over the masters. */
export async function infoSum(shards: Shard[], section: string, pattern: RegExp): Promise<number> {
  const infos = await Promise.all(shards.map((s) => s.client.info(section)));
  return infos.reduce((sum, info) => sum + Number(pattern.exec(info)?.[1] ?? 0), 0);
}

/** CPU seconds every master has used so far, user and system from one INFO each (getrusage, to the microsecond). */
export async function redisCpuSeconds(shards: Shard[]): Promise<number> {
  const infos = await Promise.all(shards.map((s) => s.client.info('cpu')));
  return infos.reduce((sum, info) => sum + Number(/used_cpu_user:([\d.]+)/.exec(info)![1]) + Number(/used_cpu_sys:([\d.]+)/.exec(info)![1]), 0);
}
