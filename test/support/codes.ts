import { readdirSync } from 'node:fs';

const SHARED = new URL('../../shared/', import.meta.url);

/** Every capability's codes.ts (any codes.ts under shared/), by its path under shared/. */
export const capabilityCodeModules = (): string[] =>
  readdirSync(SHARED, { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('/codes.ts'))
    .sort();

/** Imports every capability's codes, so the platform's registries hold them all, as a process that loads every function would. */
export async function importEveryCapabilitysCodes(): Promise<void> {
  for (const path of capabilityCodeModules()) await import(new URL(path, SHARED).href);
}
