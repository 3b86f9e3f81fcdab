import slotOf from 'cluster-key-slot';
import { Cluster, Redis } from 'ioredis';
import { redis } from '../../shared/platform/clients/redis';
import { until } from '../../shared/platform/wait';
import { monitorFeed } from '../../load/support/redis-calls';

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

/** One command as MONITOR reports it: its name and arguments, and where it came from ("lua" for a script's own). */
export interface SeenCommand {
  args: string[];
  source: string;
}

/**
 * From now on, every command the server that holds `tag`'s slot runs, in `seen` as MONITOR reports
 * them; `settled` waits until everything sent before it has arrived. The caller stops it.
 */
export async function watchCommands(tag: string) {
  const server = await serverOf(tag);
  const feed = await monitorFeed(server);
  const marker = `${tag}:everything-seen`;
  const seen: SeenCommand[] = [];
  let markerSeen = false;
  feed.on('monitor', (_time: string, args: string[], source: string) => {
    if (args.includes(marker)) markerSeen = true;
    else seen.push({ args, source });
  });
  return {
    seen,
    async settled(): Promise<SeenCommand[]> {
      // MONITOR streams asynchronously, in the order the server ran the commands: once the marker
      // has arrived, so has everything that ran before it.
      await redis().exists(marker);
      await until(async () => markerSeen, 60_000, 'the marker command', 10);
      return [...seen];
    },
    stop() {
      feed.disconnect();
      server.disconnect();
    },
  };
}
