import slotOf from 'cluster-key-slot';
import { Cluster, type Redis } from 'ioredis';
import { redis } from './redis';
import { readEnv, redisEnv } from '../config';
import { once } from '../once';

/**
 * How long a reservation waits for a replica to hold its writes before it is given back (503). A
 * replica acknowledges within one round trip between the nodes once WAIT asks (the primary sends
 * GETACK at once): under a millisecond within an AZ, a few across AZs. 100 ms is far above that,
 * so only a replica cut off, stalled or far behind misses it; and far below the client's 1 s
 * command timeout, so the buyer hears "retry" quickly while the connection stays usable. On Lambda
 * an instance serves one request at a time, so the WAIT holds its connection from no one else.
 */
export const REPLICA_ACK_TIMEOUT_MS = 100;

const replicaAcks = once(() => readEnv(redisEnv).REDIS_REPLICA_ACKS);

/**
 * The connection a key's script went over: the client's own, or on a cluster the connection to
 * the primary of the key's slot, as the cluster routes a command with that key. WAIT has no key, so
 * a cluster client would send it to any node, where it counts that connection's writes, not ours.
 */
function connectionOf(client: Redis | Cluster, key: string): Redis | undefined {
  if (!(client instanceof Cluster)) return client;
  const owner = client.slots[slotOf(key)]?.[0];
  return client.nodes('master').find((node) => `${node.options.host}:${node.options.port}` === owner);
}

/**
 * The connection a key's commands go over now, as a token: its socket, which a reconnect replaces.
 * Taken before a reservation's script and handed to heldByReplicas after it: WAIT counts only the
 * writes of the connection it runs on, so one that ran on another (a failover's reconnect between
 * the script and the WAIT, or ioredis resending either) would answer for writes it never saw. None
 * where no replica is asked for.
 */
export function connectionToken(key: string, client: Redis | Cluster = redis()): unknown {
  return replicaAcks() === 0 ? undefined : connectionTokenOf(client, key);
}

/** connectionToken for a client of one's own. */
export const connectionTokenOf = (client: Redis | Cluster, key: string): unknown => connectionOf(client, key)?.stream;

/**
 * Whether the writes made so far over the connection that serves `key` (a reservation's script,
 * just answered) are held by as many replicas as the deployment asks (REDIS_REPLICA_ACKS; 0: none
 * asked, true at once). WAIT's answer: a replica that has them would have them after a failover
 * too; one that timed out does not undo the writes, so the caller gives the reservation back.
 * False too when the slot's primary is not known (a cluster mid-refresh), or when the connection
 * is not the one `token` names, before or after the WAIT: not known to be held.
 */
export async function heldByReplicas(key: string, token: unknown): Promise<boolean> {
  const wanted = replicaAcks();
  return wanted === 0 || replicasHold(redis() as Redis | Cluster, key, wanted, token);
}

/** Whether `wanted` replicas hold what `client` wrote so far over the connection serving `key`, by WAIT on that connection (the one `token` names). */
export async function replicasHold(client: Redis | Cluster, key: string, wanted: number, token: unknown): Promise<boolean> {
  const connection = connectionOf(client, key);
  if (!connection || connection.stream !== token) return false;
  const acknowledged = await groupWait(connection, wanted);
  return acknowledged >= wanted && connection.stream === token;
}

interface WaitGroup {
  inFlight: boolean;
  /** The callers of the next WAIT, which goes once the one in flight has answered. */
  next?: { callers: Promise<number>; settle: (wait: Promise<number>) => void };
}

const groups = new WeakMap<Redis, WaitGroup>();

/**
 * WAIT as a group commit: a WAIT blocks its connection until it answers, and covers every write
 * made over it before it, so the callers that ask while one is in flight share the next, sent
 * once that one has answered. Each caller asked after its own script answered, so the WAIT it
 * shares went after its write. Where an instance serves one request at a time (Lambda) every group
 * is one; where many requests share a connection (the twin's source mode) one WAIT per round trip
 * to the replica serves them all, instead of each blocking the connection in turn.
 */
function groupWait(connection: Redis, wanted: number): Promise<number> {
  let group = groups.get(connection);
  if (!group) groups.set(connection, (group = { inFlight: false }));
  if (!group.next) {
    let settle!: (wait: Promise<number>) => void;
    const callers = new Promise<number>((resolve, reject) => (settle = (wait) => wait.then(resolve, reject)));
    group.next = { callers, settle };
  }
  const { callers } = group.next;
  if (!group.inFlight) send(connection, group, wanted);
  return callers;
}

function send(connection: Redis, group: WaitGroup, wanted: number): void {
  const batch = group.next!;
  group.next = undefined;
  group.inFlight = true;
  const wait = connection.call('WAIT', wanted, REPLICA_ACK_TIMEOUT_MS).then(Number);
  batch.settle(wait);
  void wait
    .catch(() => undefined)
    .then(() => {
      group.inFlight = false;
      if (group.next) send(connection, group, wanted);
    });
}
