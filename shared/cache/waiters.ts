import type { Redis } from 'ioredis';

/** What the fill script publishes: 'v' and the entry, or 'r' when a lease is given back unfilled. */
const FILLED_PREFIX = 'v';

/**
 * Waiters woken in one turn of the event loop. An instance that serves many callers at once (the
 * twin's, or any host running invocations concurrently) has each woken caller answer in the same
 * turn: 533–893 callers of a 390 KB feed held the loop 1.4–2.6 s writing their answers, and commands
 * whose replies sat unread all that time timed out (1 s), answering 503s. Woken a slice a turn, the
 * loop reads its sockets between slices. A Lambda instance has one caller: one slice.
 */
const WAKERS_PER_TURN = 16;

function wakeInTurns(wakers: Array<(message: string) => void>, message: string, from = 0): void {
  const to = Math.min(from + WAKERS_PER_TURN, wakers.length);
  for (let i = from; i < to; i++) wakers[i]!(message);
  if (to < wakers.length) setImmediate(() => wakeInTurns(wakers, message, to));
}

/**
 * Callers waiting for a fill, woken through sharded pub/sub (SSUBSCRIBE, SPUBLISH) on the entry's
 * channel with the entry itself. A channel carries its entry's hash tag, so on a cluster a fill's
 * message goes to the shard that holds the entry and to no other (classic PUBLISH is broadcast to
 * every node). One subscriber connection per instance, opened on first use (an instance that never
 * waits never opens it), and one subscription per channel however many of its callers wait on it.
 */
export class FillWaiters {
  private subscriber?: Redis;
  private readonly channels = new Map<string, { wakers: Set<(message: string) => void>; subscribed: Promise<unknown> }>();

  constructor(private readonly connect: () => Redis) {}

  /** Waiters still waiting are woken to re-read, since their subscriptions go with the connection. */
  close(): void {
    this.subscriber?.disconnect();
    this.subscriber = undefined;
    const channels = [...this.channels.values()];
    this.channels.clear();
    for (const { wakers } of channels) for (const wake of wakers) wake('');
  }

  /**
   * Subscribes, then runs `recheck` (so no fill can slip between the two), then waits. Returns the
   * entry a fill published, or undefined when woken otherwise or timed out.
   */
  async wait(channel: string, timeoutMs: number, recheck: () => Promise<boolean>): Promise<string | undefined> {
    const subscriber = (this.subscriber ??= this.connect().on('smessage', (ch: string, message: string) => {
      const wakers = this.channels.get(ch)?.wakers;
      if (wakers) wakeInTurns([...wakers], message);
    }));
    let wake!: (message: string) => void;
    const woken = new Promise<string>((resolve) => (wake = resolve));
    let entry = this.channels.get(channel);
    if (!entry) {
      entry = { wakers: new Set(), subscribed: subscriber.ssubscribe(channel) };
      this.channels.set(channel, entry);
    }
    entry.wakers.add(wake);
    let timer: NodeJS.Timeout | undefined;
    try {
      await entry.subscribed;
      if (await recheck()) return undefined;
      const message = await Promise.race([woken, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs)))]);
      return message?.startsWith(FILLED_PREFIX) ? message.slice(FILLED_PREFIX.length) : undefined;
    } finally {
      clearTimeout(timer);
      entry.wakers.delete(wake);
      if (entry.wakers.size === 0 && this.channels.get(channel) === entry) {
        this.channels.delete(channel);
        await subscriber.sunsubscribe(channel).catch(() => undefined);
      }
    }
  }
}
