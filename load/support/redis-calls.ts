import { Redis } from 'ioredis';

async function statSoFar(redis: Redis, name: string): Promise<number> {
  const stats = await redis.info('stats');
  return Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(stats)![1]);
}

/** Commands Redis has executed so far, script internals included. */
export const commandsProcessed = (redis: Redis) => statSoFar(redis, 'total_commands_processed');

/**
 * Reads Redis has made from its clients' sockets so far: one for each write a client made that
 * arrived alone, however many commands it carried. With one request in flight at a time, a
 * request's reads are its round trips.
 */
export const readsProcessed = (redis: Redis) => statSoFar(redis, 'total_reads_processed');

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
