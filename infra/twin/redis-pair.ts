import { freePort } from './processes';
import { redisCommand, startRedisServer, type TestRedisServer } from './redis-server';
import { startTcpProxy } from './tcp-proxy';
import { until } from '../../shared/platform/wait';

/**
 * A primary and its replica, as ElastiCache's Multi-AZ pair under asynchronous replication, and the
 * two network paths a failover test breaks: the replication link (replica to primary) and the
 * primary endpoint, the DNS name clients connect to, here a TCP proxy repointed on failover.
 */
export interface RedisPair {
  primary: TestRedisServer;
  replica: TestRedisServer;
  /** What the functions connect to (REDIS_URL): the primary endpoint. */
  url: string;
  /** Waits until the replica has everything the primary has acknowledged. */
  synced(): Promise<void>;
  /**
   * Holds the replication stream: the primary goes on acknowledging writes that never reach the
   * replica, as when replication lags at the moment of a failover.
   */
  holdReplication(): void;
  /**
   * ElastiCache's failover: the primary is lost (killed, its connections cut), the replica is
   * promoted with whatever it had received, and the endpoint points at it; clients reconnect there.
   */
  failOver(): Promise<void>;
  stop(): Promise<void>;
}

async function replication(port: number): Promise<string> {
  return String(await redisCommand(port, 'INFO', 'replication'));
}

const offset = (info: string, field: string) => Number(new RegExp(`${field}:(\\d+)`).exec(info)?.[1] ?? -1);

export async function startRedisPair(): Promise<RedisPair> {
  const [primary, replica] = await Promise.all([startRedisServer(await freePort()), startRedisServer(await freePort())]);
  const link = await startTcpProxy(primary.port);
  const endpoint = await startTcpProxy(primary.port);

  const synced = async () => {
    await until(
      async () => {
        const [ofPrimary, ofReplica] = await Promise.all([replication(primary.port), replication(replica.port)]);
        return /master_link_status:up/.test(ofReplica) && offset(ofReplica, 'slave_repl_offset') >= offset(ofPrimary, 'master_repl_offset');
      },
      10_000,
      'the replica in sync with the primary',
    );
  };

  await redisCommand(replica.port, 'REPLICAOF', '127.0.0.1', link.port);
  await synced();
  return {
    primary,
    replica,
    url: `redis://127.0.0.1:${endpoint.port}`,
    synced,
    holdReplication: () => link.pause(),
    async failOver() {
      await primary.kill();
      // Promoting drops the link, and what it held with it.
      await redisCommand(replica.port, 'REPLICAOF', 'NO', 'ONE');
      endpoint.retarget(replica.port);
    },
    async stop() {
      await Promise.all([endpoint.close(), link.close()]);
      // A primary already killed by a failover is killed again at no cost.
      await Promise.all([primary.kill(), replica.kill()]);
    },
  };
}
