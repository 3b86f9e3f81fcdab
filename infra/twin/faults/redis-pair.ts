import { goodReplicas, MIN_REPLICAS } from '../../redis';
import { freePort } from '../services/processes';
import { redisCommand, startRedisServer, type TestRedisServer } from './redis-server';
import { startTcpProxy } from './tcp-proxy';
import { until } from '../../../shared/platform/wait';

/**
 * A primary and its replica, as ElastiCache's Multi-AZ pair under asynchronous replication, and the
 * two network paths a failover test breaks: the replication link (replica to primary) and the
 * primary endpoint, the DNS name clients connect to, here a TCP proxy repointed on failover. Both
 * nodes run the stack's parameter group's min-replicas-to-write (infra/redis.ts): a primary that
 * hears from no replica refuses writes. A node lost is replaced, as ElastiCache replaces one: a new
 * replica of whichever node is the primary then, fully synced.
 */
export interface RedisPair {
  /** The primary now (the replica promoted, after failOver). */
  readonly primary: TestRedisServer;
  /** The replica now (the replacement, once replaced). */
  readonly replica: TestRedisServer;
  /** What the functions connect to (REDIS_URL): the primary endpoint. */
  url: string;
  /** Waits until the replica has everything the primary has acknowledged. */
  synced(): Promise<void>;
  /**
   * Holds the replication stream: the primary goes on acknowledging writes that never reach the
   * replica, as when replication lags at the moment of a failover.
   */
  holdReplication(): void;
  /** Lets the held stream through, in order, as a healed network does. */
  resumeReplication(): void;
  /**
   * ElastiCache's failover: the primary is lost (killed, its connections cut), the replica is
   * promoted with whatever it had received, and the endpoint points at it; clients reconnect there.
   * The node lost is then replaced (replaceReplica): until the new replica has synced the promoted
   * primary refuses writes. Resolves once it has (seconds here; minutes on AWS).
   */
  failOver(): Promise<void>;
  /** The replica is lost (killed): the primary goes on alone until replaceReplica(). */
  killReplica(): Promise<void>;
  /** ElastiCache's replacement of the node lost: a new replica of the primary, resolved once in sync. */
  replaceReplica(): Promise<void>;
  stop(): Promise<void>;
}

async function replication(port: number): Promise<string> {
  return String(await redisCommand(port, 'INFO', 'replication'));
}

const offset = (info: string, field: string) => Number(new RegExp(`${field}:(\\d+)`).exec(info)?.[1] ?? -1);

/** A node with the stack's parameter group's replica settings, which take effect whenever it is a primary. */
async function startNode(): Promise<TestRedisServer> {
  const node = await startRedisServer(await freePort());
  await redisCommand(node.port, 'CONFIG', 'SET', ...Object.entries(MIN_REPLICAS).flat());
  return node;
}

export async function startRedisPair(): Promise<RedisPair> {
  let [primary, replica] = await Promise.all([startNode(), startNode()]);
  let link = await startTcpProxy(primary.port);
  const endpoint = await startTcpProxy(primary.port);
  const lost: TestRedisServer[] = [];

  const synced = async () => {
    await until(
      async () => {
        const [ofPrimary, ofReplica] = await Promise.all([replication(primary.port), replication(replica.port)]);
        // The primary counting it good, as a write needs (its first ACK), not only the replica's link up.
        return (
          /master_link_status:up/.test(ofReplica) &&
          offset(ofReplica, 'slave_repl_offset') >= offset(ofPrimary, 'master_repl_offset') &&
          goodReplicas(ofPrimary) >= 1
        );
      },
      10_000,
      'the replica in sync with the primary',
    );
  };
  /** The replica follows the primary through the link, the path a test can hold. */
  const follow = async () => {
    await redisCommand(replica.port, 'REPLICAOF', '127.0.0.1', link.port);
    await synced();
  };

  await follow();
  const replaceReplica = async () => {
    await link.close();
    link = await startTcpProxy(primary.port);
    replica = await startNode();
    await follow();
  };
  return {
    get primary() {
      return primary;
    },
    get replica() {
      return replica;
    },
    url: `redis://127.0.0.1:${endpoint.port}`,
    synced,
    holdReplication: () => link.pause(),
    resumeReplication: () => link.resume(),
    async failOver() {
      await primary.kill();
      lost.push(primary);
      // Promoting drops the link, and what it held with it.
      await redisCommand(replica.port, 'REPLICAOF', 'NO', 'ONE');
      endpoint.retarget(replica.port);
      primary = replica;
      await replaceReplica();
    },
    async killReplica() {
      await replica.kill();
      lost.push(replica);
    },
    replaceReplica,
    async stop() {
      await Promise.all([endpoint.close(), link.close()]);
      // A node already killed is killed again at no cost.
      await Promise.all([primary.kill(), replica.kill(), ...lost.map((node) => node.kill())]);
    },
  };
}
