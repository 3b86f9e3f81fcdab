import { availableParallelism } from 'node:os';

/**
 * How many cold starts run at once. A Lambda instance initialises on a CPU share of its own; the
 * twin's instances share this machine's cores, and 64 started at once on two of them all passed
 * the 10 s init limit, each then replaced by another that did too. So the rest wait for a slot,
 * and an instance's init limit counts from when it has one.
 */
export class InitSlots {
  private free: number;
  private readonly queue: (() => void)[] = [];

  constructor(readonly size: number) {
    this.free = size;
  }

  /** Resolves once a slot is this caller's, with the function that gives it back. */
  async take(): Promise<() => void> {
    if (this.free > 0) this.free -= 1;
    else await new Promise<void>((resolve) => this.queue.push(resolve));
    let given = false;
    return () => {
      if (given) return;
      given = true;
      // A slot given back goes to the oldest waiter, so none waits behind newcomers.
      const next = this.queue.shift();
      if (next) next();
      else this.free += 1;
    };
  }
}

/** One slot per core, for every bundle runner in this process: they share the cores. */
export const coreSlots = new InitSlots(availableParallelism());
