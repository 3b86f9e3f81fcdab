import { Cluster, Redis, type Command, type RedisOptions } from 'ioredis';
import { readEnv, redisEnv } from '../config';
import { logger } from '../logger';
import { once } from '../once';
import { guardSlots, SLOT_GUARD_ENV } from '../redis/slot-guard';
import { loadedSecret, refreshSecret } from './credentials';

/**
 * The longest a caller waits for Redis, whatever the connection is doing: well under the
 * functions' 10 s timeout, so Redis away costs a retry-safe 503 (or the catalog's read from MySQL)
 * rather than the invocation. Every script here runs in well under a millisecond; none may need more.
 * A reply that arrived while the event loop was held is read before the timeout is decided
 * (ioredis's Command#setTimeout, patched in infra/patches): Redis's delay is timed, not the loop's.
 */
const COMMAND_TIMEOUT_MS = 1_000;

/** ioredis's default doubles to 5 s: a client that slow to try again keeps failing seconds after Redis is back. */
function reconnectDelay(attempt: number): number {
  const ceiling = Math.min(50 * 2 ** (attempt - 1), 1_000);
  // Spread, so that a fleet of instances does not reconnect in step.
  return ceiling / 2 + (Math.random() * ceiling) / 2;
}

/**
 * Replies of a server that refused a command without running it, because it is not the primary: a
 * replica (after a Multi-AZ failover, the old primary, still reached over a connection made before
 * the endpoint's DNS name moved to the new one) or a replica cut off from its primary. Since the
 * command did not run, sending it again is safe: the client reconnects, through DNS again, and
 * resends it. While the name still points at a replica this repeats, but only until the command
 * times out (sendOnlyAwaited drops it then). LOADING is not among them: that node is the right one,
 * and ioredis's ready check would hold a new connection until it has loaded, while the command
 * waits out its timeout in the offline queue instead of failing at once.
 */
const NOT_THE_PRIMARY = /^(READONLY|MASTERDOWN)\b/;

const options: RedisOptions = {
  commandTimeout: COMMAND_TIMEOUT_MS,
  // A connection slower to open than a command may wait is not worth waiting for.
  connectTimeout: COMMAND_TIMEOUT_MS,
  // What queued while a connection was lost is rejected when the first attempt to make it again fails.
  maxRetriesPerRequest: 1,
  enableOfflineQueue: true,
  retryStrategy: reconnectDelay,
  reconnectOnError: (error) => (NOT_THE_PRIMARY.test(error.message) ? 2 : false),
};

/** How long a cluster's slot map may take to refresh. */
const SLOTS_REFRESH_TIMEOUT_MS = COMMAND_TIMEOUT_MS;
/**
 * How often it is refreshed unasked. A MOVED answer or a lost node refreshes it at once; this only
 * catches changes no command met. ioredis opens a connection of its own for every refresh (a TLS
 * handshake on ElastiCache), so at its default of 5 s a fleet of instances would keep a stream of
 * them open against the cluster.
 */
const SLOTS_REFRESH_INTERVAL_MS = 30_000;
/** MOVED/ASK answers followed for one command: a slot moves once per resharding step; more is a map that keeps changing. */
const MAX_REDIRECTIONS = 4;

/**
 * ElastiCache cluster mode (and Serverless): the URL is the configuration endpoint, and the client
 * learns every shard's nodes from it. The nodes' hostnames are used as given (dnsLookup passes them
 * through) so that over TLS each connection verifies its node's own name (tls.connect's servername
 * defaults to the host it dials, unless an IP), which ElastiCache's certificates are issued for;
 * resolved to IPs first, every check would fail. Reads go to primaries
 * only: a replica behind its primary would show a reservation not yet made, and every hot read
 * here is part of a write path. A subscriber follows the shards of its channels (sharded pub/sub).
 */
function cluster(url: URL, password: string | undefined, role: ConnectionRole, commandTimeout: number): Redis {
  const tls = url.protocol === 'rediss:' ? { tls: {} } : {};
  const client = new Cluster([{ host: url.hostname, port: Number(url.port || 6379) }], {
    dnsLookup: (address, callback) => callback(null, address),
    scaleReads: 'master',
    slotsRefreshTimeout: SLOTS_REFRESH_TIMEOUT_MS,
    slotsRefreshInterval: SLOTS_REFRESH_INTERVAL_MS,
    maxRedirections: MAX_REDIRECTIONS,
    clusterRetryStrategy: reconnectDelay,
    shardedSubscribers: role === 'subscriber',
    redisOptions: { ...options, commandTimeout, ...tls, ...(password ? { password } : {}) },
  });
  // Each node's connection corks its writes as a single node's does: one write per shard per round.
  client.on('+node', (node: Redis) => coalesceWrites(node));
  // Typed as Redis for the commands used here; the slot guard (tests) holds every call to one slot.
  return client as unknown as Redis;
}

/**
 * Logs a lost connection once per outage rather than on every reconnect attempt; without a
 * listener ioredis would print each one as an unhandled error event.
 */
export function reportErrors(client: Redis, name: string): Redis {
  let down = false;
  client.on('error', (error: Error) => {
    if (!down) logger.warn('Redis connection lost', { client: name, error: error.message });
    down = true;
  });
  client.on('ready', () => (down = false));
  return client;
}

/**
 * After a rotation the next connection's AUTH is refused: the token is looked up again once, and
 * ioredis's next reconnect presents the new one.
 */
function followRotation(client: Redis | Cluster, secretId: string): void {
  client.on('error', (error: Error) => {
    if (!/^(WRONGPASS|NOAUTH)/.test(error.message)) return;
    refreshSecret(secretId).then(
      (password) => {
        if (client instanceof Cluster) client.options.redisOptions = { ...client.options.redisOptions, password };
        else client.options.password = password;
      },
      (lookupError: Error) => logger.error('Redis AUTH token could not be looked up again', { error: lookupError.message }),
    );
  });
}

/**
 * Commands written while the event loop works through one round of I/O leave together, in one
 * write, when it next checks (setImmediate): one syscall for all the requests an instance has in
 * flight instead of one each. (ioredis's own auto-pipelining does this through pipelines, and
 * failed inside ioredis under a 1,000-way stampede; this only batches the socket's writes.)
 */
function coalesceWrites(client: Redis): Redis {
  client.on('connect', () => {
    const socket = client.stream;
    const write = socket.write.bind(socket);
    let corked = false;
    socket.write = ((...args: Parameters<typeof write>) => {
      if (!corked) {
        corked = true;
        socket.cork();
        setImmediate(() => {
          corked = false;
          socket.uncork();
        });
      }
      return write(...args);
    }) as typeof socket.write;
  });
  return client;
}

/**
 * The offline queue holds commands while a connection is being made: at a cold start, and while a
 * lost one is made again (a reset, a failover). Once an attempt to make it again has failed too,
 * Redis is away rather than blinking: commands then fail at once instead of queueing for a
 * connection that is not coming, until one is ready again. So the queue holds at most what
 * arrives during one reconnect attempt, itself bounded by the connect timeout.
 */
function failFastWhileAway(client: Redis | Cluster): void {
  let closedSinceReady = false;
  client.on('close', () => {
    if (closedSinceReady) client.options.enableOfflineQueue = false;
    closedSinceReady = true;
  });
  client.on('ready', () => {
    closedSinceReady = false;
    client.options.enableOfflineQueue = true;
  });
}

/**
 * A command whose caller already has its answer (it timed out) is dropped rather than sent when a
 * connection comes back, from the offline queue or as a resend of one in flight when the last
 * connection was lost: it would run after its caller was told it failed, an order reserved after
 * its 503. Parts of a pipeline or transaction still go whole, as ioredis sends them.
 */
function sendOnlyAwaited(client: Redis | Cluster, commandTimeout: number): void {
  const send = client.sendCommand.bind(client) as (command: Command, ...rest: unknown[]) => unknown;
  client.sendCommand = (command: Command, ...rest: unknown[]) => {
    // ioredis times a cluster's command only once a node has it, not while the cluster queues it.
    if (client instanceof Cluster) command.setTimeout(commandTimeout);
    const partOfPipeline = rest[0] !== undefined;
    if (command.isSettled && !partOfPipeline) return command.promise;
    return send(command, ...rest);
  };
}

/** What a connection is for: commands, or waiting on (sharded) channels, which on a cluster takes connections of its own per shard. */
type ConnectionRole = 'commands' | 'subscriber';

/**
 * A new connection to the function's Redis, with the AUTH token its secret holds (or its URL, in the twin).
 * `commandTimeoutMs` is for harnesses that run many simulated instances on one event loop, where a
 * reply waits on the other instances' work as it never does on Lambda; functions keep the default.
 */
export function connectRedis(role: ConnectionRole = 'commands', commandTimeoutMs = COMMAND_TIMEOUT_MS): Redis {
  const { REDIS_URL, REDIS_CLUSTER, REDIS_AUTH_SECRET_ID } = readEnv(redisEnv);
  const url = new URL(REDIS_URL);
  const password = REDIS_AUTH_SECRET_ID ? loadedSecret(REDIS_AUTH_SECRET_ID) : decodeURIComponent(url.password) || undefined;
  const client = REDIS_CLUSTER
    ? cluster(url, password, role, commandTimeoutMs)
    : coalesceWrites(new Redis(REDIS_URL, { ...options, commandTimeout: commandTimeoutMs, ...(password ? { password } : {}) }));
  failFastWhileAway(client);
  sendOnlyAwaited(client, commandTimeoutMs);
  if (REDIS_AUTH_SECRET_ID) followRotation(client, REDIS_AUTH_SECRET_ID);
  if (process.env[SLOT_GUARD_ENV] === 'true') guardSlots(client);
  return client;
}

let connectionsReady = 0;

/**
 * How often the shared connection has become ready. Each time may be to a node that lost writes
 * the last one acknowledged (a failover to a replica behind, a restart from an older file).
 */
export const readyConnections = () => connectionsReady;

/** One connection per Lambda instance, made on first use and reused by every invocation it serves. */
export const redis = once(() => {
  const client = reportErrors(connectRedis(), 'commands');
  client.on('ready', () => (connectionsReady += 1));
  return client;
});
