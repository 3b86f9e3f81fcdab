import { cpSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, spawnService, waitFor, type Spawned } from '../../infra/twin/services/processes';
import { redisDataArgs } from '../../infra/twin/services/services';
import { redisCommand } from '../../infra/twin/faults/redis-server';

/**
 * A redis-server the suite controls, run as the twin runs its own (append-only file fsynced every
 * second, noeviction) and handed to the twin through REDIS_URL: the suite can kill it, stop it and
 * start it again on the same port from the same files, as a node crashes and comes back.
 */
export interface ChaosRedis {
  port: number;
  url: string;
  /** Where its append-only file lives. */
  dataDir: string;
  readonly running: boolean;
  /** SIGKILL: what the last second of writes had not yet reached the disk is lost. */
  kill(): Promise<void>;
  /** SIGTERM: Redis fsyncs its append-only file and exits. */
  stop(): Promise<void>;
  /** On the same port, from the same files; resolves once it answers PING (loaded). */
  start(): Promise<void>;
  /** One command over a connection of its own. */
  command(...args: (string | number)[]): Promise<unknown>;
  /** A copy of its files as they are now (they hold every write Redis has answered). */
  snapshot(): string;
  /** Replaces its files (it must not be running) with a snapshot's. */
  restore(snapshot: string): void;
}

export async function startChaosRedis(stateDir: string): Promise<ChaosRedis> {
  const port = await freePort();
  const dataDir = join(stateDir, 'redis');
  const snapshotDir = join(stateDir, 'redis-snapshot');
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  let proc: Spawned | undefined;
  const exited = () => proc === undefined || proc.child.exitCode !== null || proc.child.signalCode !== null;
  const command = (...args: (string | number)[]) => redisCommand(port, ...args);

  async function start() {
    proc = spawnService(
      'redis-server',
      ['--bind', '127.0.0.1', '--port', String(port), ...redisDataArgs(dataDir, true), '--protected-mode', 'yes'],
      join(stateDir, 'redis.log'),
    );
    await waitFor(`redis-server on port ${port}`, () => command('PING'), 30_000);
  }
  const ended = async () => {
    if (proc && !exited()) await new Promise((r) => proc!.child.once('exit', r));
  };
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    dataDir,
    get running() {
      return !exited();
    },
    async kill() {
      proc?.child.kill('SIGKILL');
      await ended();
    },
    async stop() {
      await proc?.stop();
    },
    start,
    command,
    snapshot() {
      rmSync(snapshotDir, { recursive: true, force: true });
      cpSync(dataDir, snapshotDir, { recursive: true });
      return snapshotDir;
    },
    restore(snapshot) {
      if (!exited()) throw new Error('Redis must be down to restore its files');
      rmSync(dataDir, { recursive: true, force: true });
      cpSync(snapshot, dataDir, { recursive: true });
    },
  };
}

/** One command to a Redis, over a connection of its own. */
export type RedisCommand = (...args: (string | number)[]) => Promise<unknown>;

/** Longer than anything between the last look and the kill, which ends the pause first. */
const LAST_LOOK_PAUSE_MS = 60_000;

/**
 * Who holds a reservation (the owner's holders hash, SaleKind.holders) in a Redis about to be lost
 * (killed, failed over): its writes paused first (CLIENT PAUSE WRITE; reads are still served), so
 * that none is made there after this look, provided the kill comes before the pause ends.
 */
export async function lastHolders(command: RedisCommand, holders: string): Promise<string[]> {
  await command('CLIENT', 'PAUSE', LAST_LOOK_PAUSE_MS, 'WRITE');
  return (await command('HKEYS', holders)) as string[];
}

/**
 * The holders of `went` that the Redis replacing it (a copy of its files, a replica) does not hold:
 * the reservations lost with it, by buyer, each a unit the replacement may sell again.
 */
export async function holdersLost(command: RedisCommand, holders: string, went: string[]): Promise<string[]> {
  const kept = new Set((await command('HKEYS', holders)) as string[]);
  return went.filter((buyer) => !kept.has(buyer));
}
