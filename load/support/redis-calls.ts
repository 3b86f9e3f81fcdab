import { Redis } from 'ioredis';

async function statSoFar(redis: Redis, name: string): Promise<number> {
  const stats = await redis.info('stats');
  return Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(stats)![1]);
}

/** Commands Redis has executed so far, script internals included. */
export const commandsProcessed = (redis: Redis) => statSoFar(redis, 'total_commands_processed');

/**
 * A MONITOR feed of `server`'s, on a connection of its own (the caller disconnects it). ioredis's
 * own monitor() enters its monitoring mode a microtask after MONITOR's OK, so a command another
 * client runs in between, read in the same chunk, arrives as a reply to nothing asked: it reports
 * a "Command queue state error" and fails the call (seen in CI on a busy machine). Such a line is
 * from before the feed was given to its caller, who could not have seen it anyway: it is dropped,
 * also after a reconnection, where ioredis sends MONITOR again. Any other error fails the start;
 * after it (a connection lost), it is printed, as ioredis prints a connection's error no one listens for.
 */
export function monitorFeed(server: Redis): Promise<Redis> {
  const feed = server.duplicate({ monitor: true, lazyConnect: false });
  return new Promise((resolve, reject) => {
    let monitoring = false;
    feed.on('error', (error: Error) => {
      if (/^Command queue state error/.test(error.message)) return;
      if (monitoring) {
        process.stderr.write(`MONITOR feed: ${error.message}\n`);
        return;
      }
      feed.disconnect();
      reject(error);
    });
    feed.once('monitoring', () => {
      monitoring = true;
      resolve(feed);
    });
  });
}

/**
 * Round trips to Redis made while `act` runs, counted by the server through MONITOR: every command
 * a client sent, excluding those a Lua script ran inside its single call. MONITOR slows Redis, so
 * this runs on a small sample apart from the timed load.
 */
export async function countRoundTrips(redisUrl: string, act: () => Promise<void>): Promise<number> {
  const monitorClient = new Redis(redisUrl);
  const monitor = await monitorFeed(monitorClient);
  const ownAddress = /addr=(\S+)/.exec(String(await monitorClient.client('INFO').catch(() => '')))?.[1];
  let trips = 0;
  monitor.on('monitor', (_time: string, _args: string[], source: string) => {
    if (source === 'lua' || source.endsWith(' lua') || (ownAddress && source.endsWith(ownAddress))) return;
    trips += 1;
  });
  await new Promise((r) => setTimeout(r, 50));
  try {
    await act();
    await new Promise((r) => setTimeout(r, 200));
    return trips;
  } finally {
    monitor.disconnect();
    monitorClient.disconnect();
  }
}
