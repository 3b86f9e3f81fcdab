/**
 * The twin `npm start` left running, as seen from another process on the same machine: where its
 * state is, and the environment that points that process's own use of shared/ at it. For the
 * operators' tools (reconcile, redrive) and the benches alike.
 */
import { existsSync, readFileSync } from 'node:fs';
import { functionEnvironment } from './deployment';
import type { TwinInfo } from './twin-process';

/** Where `npm start` (main.ts, in its default state dir) writes what it serves once it serves. */
export const RUNNING_TWIN_STATE = '.local/twin/twin.json';

/** What the running twin's state says, or undefined when there is none (it may have died since: check its pid). */
export function readRunningTwin(): TwinInfo | undefined {
  if (!existsSync(RUNNING_TWIN_STATE)) return undefined;
  return JSON.parse(readFileSync(RUNNING_TWIN_STATE, 'utf8')) as TwinInfo;
}

/**
 * The environment that points this process's own use of shared/ at a running twin (the twin's own
 * view of its stores, credentials in the URLs), through the same map of needs the functions get.
 */
export function twinEnvironment(twin: TwinInfo): Record<string, string> {
  const stores = {
    redis: { url: twin.redisUrl, adminUrl: twin.redisUrl },
    database: { url: twin.databaseUrl, adminUrl: twin.databaseUrl },
    emulator: { url: twin.emulatorUrl },
  };
  return functionEnvironment(stores, twin.queues);
}
