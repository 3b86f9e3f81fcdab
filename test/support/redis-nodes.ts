import slotOf from 'cluster-key-slot';
import { Cluster, Redis } from 'ioredis';
import { redis } from '../../shared/clients/redis';

/** The shared client's nodes that hold data: the one server, or a cluster's masters. */
function dataNodes(): Redis[] {
  const client = redis() as Redis | Cluster;
  return client instanceof Cluster ? client.nodes('master') : [client];
}

/** KEYS on every node that holds data (on a cluster KEYS answers for one node's slots only). */
export async function keysMatching(pattern: string): Promise<string[]> {
  const client = redis() as Redis | Cluster;
  if (client instanceof Cluster) await client.ping();
  return (await Promise.all(dataNodes().map((node) => node.keys(pattern)))).flat();
}

/**
 * A plain connection (not the cluster client) to the server that holds this key's slot: for what
 * is per server, as MONITOR. The caller disconnects it.
 */
export async function serverOf(key: string): Promise<Redis> {
  const client = redis() as Redis | Cluster;
  if (!(client instanceof Cluster)) return new Redis(process.env.REDIS_URL!);
  await client.ping();
  const [address] = client.slots[slotOf(key)]!;
  const [host, port] = address!.split(':');
  return new Redis(Number(port), host!);
}

/** The shared client's own connection to the server that holds this key's slot (on one node, the client itself). */
export async function connectionOf(key: string): Promise<Redis> {
  const client = redis() as Redis | Cluster;
  if (!(client instanceof Cluster)) return client;
  await client.ping();
  const [address] = client.slots[slotOf(key)]!;
  return client.nodes('master').find((node) => `${node.options.host}:${node.options.port}` === address)!;
}
