import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import { goodReplicas, MIN_REPLICAS } from '../../redis';
import { freePort, spawnService, waitFor } from './processes';
import { external, redisDataArgs, type Service } from './services';

/**
 * Masters of the twin's cluster: the fewest redis-cli --cluster create accepts. Each has a replica
 * of its own unless asked otherwise, as ElastiCache's cluster mode runs Multi-AZ, and the functions
 * wait for it to hold each reservation (REDIS_REPLICA_ACKS); without, a node lost is a shard lost.
 */
const MASTERS = 3;
const SLOTS = 16_384;
/** How long a node may be unreachable before the others mark it failed (redis-server's default is 15 s). */
const NODE_TIMEOUT_MS = 2_000;

/**
 * A Redis Cluster of three masters on free loopback ports, as ElastiCache cluster mode (or
 * Serverless) runs one: the functions reach it at one node's address with REDIS_CLUSTER=true and
 * follow its slots from there. Each node keeps its data and its cluster config (nodes.conf) in a
 * directory of its own under stateDir. A durable one is started again on the ports it was made on,
 * so the nodes find each other from nodes.conf; when a port has been taken since, it is made afresh.
 * With REDIS_URL set, that is taken to be a node of a cluster already running (with
 * REDIS_REPLICA_ACKS saying whether it has replicas to wait for).
 */
export async function startRedisCluster(stateDir: string, durable: boolean, { replicas = 1 } = {}): Promise<Service> {
  if (process.env.REDIS_URL) return { ...external(process.env.REDIS_URL), cluster: true };
  const root = resolve(stateDir, 'redis-cluster');
  const count = MASTERS * (1 + replicas);
  const reused = durable ? await reusablePorts(root, count) : undefined;
  if (!reused) rmSync(root, { recursive: true, force: true });
  const ports = reused ?? (await distinctFreePorts(count));
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, 'ports.json'), JSON.stringify(ports));

  const nodes = ports.map((port) => {
    const dataDir = join(root, String(port));
    mkdirSync(dataDir, { recursive: true });
    return spawnService(
      'redis-server',
      [
        ...['--bind', '127.0.0.1', '--port', String(port), '--protected-mode', 'yes'],
        ...['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', String(NODE_TIMEOUT_MS)],
        ...redisDataArgs(dataDir, durable),
        // As the stack's cluster-mode parameter group: a master cut off from its replica stops taking writes.
        ...(replicas ? Object.entries(MIN_REPLICAS).flatMap(([name, value]) => [`--${name}`, value]) : []),
      ],
      join(root, `redis-${port}.log`),
    );
  });
  const stop = async () => void (await Promise.all(nodes.map((node) => node.stop())));
  try {
    await Promise.all(ports.map((port) => waitFor(`redis-server :${port}`, () => withNode(port, (client) => client.ping()))));
    if (!reused) await createCluster(ports, replicas, join(root, 'cluster-create.log'));
    await waitFor('redis cluster', () => Promise.all(ports.map((port) => withNode(port, (client) => clusterOk(client, count)))));
    if (replicas) await waitFor('every replica in sync', () => Promise.all(ports.map((port) => withNode(port, inSync))));
  } catch (error) {
    await stop();
    throw error;
  }
  const url = `redis://127.0.0.1:${ports[0]}`;
  return { url, adminUrl: url, cluster: true, pid: nodes[0]!.child.pid, ...(replicas ? { replicaAcks: 1 } : {}), stop };
}

/**
 * A replica whose link to its master is up; a master that counts a replica good, as
 * min-replicas-to-write does before it takes a write. A replica reports its link up once it has
 * loaded the master's data, but with a diskless sync the master counts it only at its first ACK:
 * between the two, writes are refused with NOREPLICAS.
 */
async function inSync(client: Redis): Promise<void> {
  const info = String(await client.info('replication'));
  if (/role:slave/.test(info) ? !/master_link_status:up/.test(info) : !goodReplicas(info)) throw new Error('replication not up yet');
}

/** The ports a durable cluster was made on, if it has its config still and every port is free again. */
async function reusablePorts(root: string, count: number): Promise<number[] | undefined> {
  const file = join(root, 'ports.json');
  if (!existsSync(file)) return undefined;
  const ports = JSON.parse(readFileSync(file, 'utf8')) as number[];
  if (ports.length !== count || !ports.every((port) => existsSync(join(root, String(port), 'nodes.conf')))) return undefined;
  const free = await Promise.all(ports.map((port) => portIsFree(port)));
  return free.every(Boolean) ? ports : undefined;
}

async function portIsFree(port: number): Promise<boolean> {
  const client = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 500 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return false;
  } catch {
    return true;
  } finally {
    client.disconnect();
  }
}

/** A node listens on its port and on port + 10000 (the cluster bus): both must be free, and none shared. */
async function distinctFreePorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < count) {
    const port = await freePort();
    if (port + 10_000 > 65_535 || ports.some((p) => Math.abs(p - port) === 10_000 || p === port)) continue;
    if (!(await portIsFree(port + 10_000))) continue;
    ports.push(port);
  }
  return ports;
}

async function withNode<T>(port: number, use: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await use(client);
  } finally {
    client.disconnect();
  }
}

/** Every slot served and every node known, as this node sees it. */
async function clusterOk(client: Redis, nodes: number): Promise<void> {
  const info = String(await client.cluster('INFO'));
  const field = (name: string) => new RegExp(`^${name}:(\\S+)`, 'm').exec(info)?.[1];
  if (field('cluster_state') !== 'ok' || Number(field('cluster_slots_ok')) !== SLOTS || Number(field('cluster_known_nodes')) !== nodes) {
    throw new Error(`cluster not ready: state ${field('cluster_state')}, ${field('cluster_slots_ok')} slots ok, ${field('cluster_known_nodes')} nodes known`);
  }
}

/** redis-cli assigns the slots evenly and joins the nodes; it exits once the cluster is configured. */
async function createCluster(ports: number[], replicas: number, logFile: string): Promise<void> {
  const args = ['--cluster', 'create', ...ports.map((port) => `127.0.0.1:${port}`), '--cluster-replicas', String(replicas), '--cluster-yes'];
  const child = spawn('redis-cli', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve, reject) => child.once('error', reject).once('exit', resolve));
  writeFileSync(logFile, output);
  if (code !== 0) throw new Error(`redis-cli --cluster create exited with ${code}; see ${logFile}`);
}
