import { describe, expect, it } from 'vitest';
import { redis } from '../../shared/platform/clients/redis';
import { connectionOf } from '../support/redis-nodes';

/** Keys of one hash tag: on a cluster, one shard, whose connection is the one watched. */
const TAG = '{redis-writes}';
const keyOf = (i: number) => `${TAG}:request-${i}`;

describe('the shared Redis connection', () => {
  it('sends the commands of concurrent requests in one write, and answers each its own', async () => {
    // Prepare: a connection that is up (on a cluster, the client's connection to the tag's shard), and a count of what reaches its socket.
    await redis().mset(...Array.from({ length: 50 }, (_, i) => [keyOf(i), `request-${i}`]).flat());
    const socket = (await connectionOf(TAG)).stream as unknown as { _write: (...a: unknown[]) => void; _writev: (...a: unknown[]) => void };
    const counted = { write: 0, writev: 0 };
    const [write, writev] = [socket._write, socket._writev];
    socket._write = function (this: unknown, ...args: unknown[]) {
      counted.write++;
      return write.apply(this, args);
    };
    socket._writev = function (this: unknown, ...args: unknown[]) {
      counted.writev++;
      return writev.apply(this, args);
    };

    // Act: fifty requests' commands issued in the same round of the event loop.
    const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => redis().get(keyOf(i))));
    Object.assign(socket, { _write: write, _writev: writev });

    // Assess
    expect(replies).toEqual(Array.from({ length: 50 }, (_, i) => `request-${i}`));
    expect(counted.write + counted.writev).toBe(1);
  });
});
