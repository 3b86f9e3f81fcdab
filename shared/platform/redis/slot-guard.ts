import type { ChainableCommander, Command, Redis } from 'ioredis';
import slotOf from 'cluster-key-slot';

/**
 * Set by the test suite's setup, never by a deployment: the shared client then refuses what a
 * Redis Cluster would refuse, on a single node too, so every path the tests exercise is held to
 * one hash slot per command, script call, transaction and pipeline, not only the paths that happen
 * to meet a cluster.
 */
export const SLOT_GUARD_ENV = 'SURGE_SLOT_GUARD';

export class CrossSlotError extends Error {
  override name = 'CrossSlotError';
}

/** The one slot every key of these commands hashes to; undefined when none has a key. */
function commonSlot(commands: Command[], what: string): number | undefined {
  let slot: number | undefined;
  let first: string | undefined;
  for (const command of commands) {
    for (const key of command.getKeys()) {
      const keySlot = slotOf(key);
      if (slot === undefined) [slot, first] = [keySlot, String(key)];
      else if (keySlot !== slot)
        throw new CrossSlotError(`${what} crosses hash slots: ${first} (slot ${slot}) and ${String(key)} (slot ${keySlot}) in ${command.name.toUpperCase()}`);
    }
  }
  return slot;
}

type Queued = ChainableCommander & { _queue: Command[] };

/** Checks a pipeline's (or MULTI's) whole queue when it is sent, before anything of it goes out. */
function guardExec(pipeline: ChainableCommander, what: string): ChainableCommander {
  const exec = pipeline.exec.bind(pipeline);
  pipeline.exec = ((...args: Parameters<typeof exec>) => {
    try {
      commonSlot((pipeline as Queued)._queue, what);
    } catch (error) {
      return Promise.reject(error);
    }
    return exec(...args);
  }) as typeof exec;
  return pipeline;
}

/**
 * Refuses, before it is sent, any command, script call (EVAL/EVALSHA: their KEYS), MULTI
 * transaction or pipeline whose keys do not all hash to one slot. Keys are what ioredis itself
 * extracts to route a cluster's commands (Command.getKeys). A command that is part of a pipeline
 * goes through sendCommand too, and is checked with its whole pipeline at exec.
 */
export function guardSlots(client: Redis): void {
  const send = client.sendCommand.bind(client) as (command: Command, ...rest: unknown[]) => unknown;
  client.sendCommand = (command: Command, ...rest: unknown[]) => {
    if (rest[0] === undefined) {
      try {
        commonSlot([command], 'A command');
      } catch (error) {
        command.reject(error as Error);
        return command.promise;
      }
    }
    return send(command, ...rest);
  };
  const pipeline = client.pipeline.bind(client);
  client.pipeline = ((...args: Parameters<typeof pipeline>) => guardExec(pipeline(...args), 'A pipeline')) as typeof pipeline;
  const multi = client.multi.bind(client) as (...args: unknown[]) => ChainableCommander;
  client.multi = ((...args: unknown[]) => guardExec(multi(...args), 'A transaction')) as typeof client.multi;
}
