import { afterAll, describe, expect, it } from 'vitest';
import { redis } from '../../shared/platform/clients/redis';
import { holdTheLoop } from '../support/held-loop';
import { serverOf } from '../support/redis-nodes';

/** The functions' command timeout (shared/platform/clients/redis.ts). */
const COMMAND_TIMEOUT_MS = 1_000;
/** Keys of one hash tag: on a cluster, one shard, the one paused below. */
const KEY = '{redis-busy-loop}:value';

/** One turn of the loop: a command written now has gone out to the socket by its end (the shared connection uncorks there). */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

afterAll(async () => {
  await redis().del(KEY);
});

describe("the functions' Redis command timeout", () => {
  it('reads a reply that arrived while the event loop was held before it decides that the command timed out', async () => {
    // Prepare: the value, and the port of the server that holds its key, whose answer the loop waits for.
    await redis().set(KEY, 'answered');
    const server = await serverOf(KEY);
    const port = server.options.port!;
    server.disconnect();

    // Act: the command goes out, Redis answers at once, and the loop is held past the timeout until the answer waits unread.
    const reply = redis().get(KEY);
    await nextTurn();
    holdTheLoop(COMMAND_TIMEOUT_MS * 1.5, port);

    // Assess
    await expect(reply).resolves.toBe('answered');
  });

  it('still times out a command that Redis does not answer', async () => {
    // Prepare: the key's server takes no command from any client for longer than the timeout.
    const server = await serverOf(KEY);
    await server.client('PAUSE', COMMAND_TIMEOUT_MS * 2, 'ALL');

    try {
      // Act
      const reply = redis().get(KEY);

      // Assess: the error names the command, for the 503's log to say which call waited.
      await expect(reply).rejects.toThrow('Command timed out (get)');
    } finally {
      await server.client('UNPAUSE');
      server.disconnect();
    }
  });
});
