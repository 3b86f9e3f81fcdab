import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, type Cluster, type Redis } from 'ioredis';
import { count } from '../metrics';

export type RedisClient = Redis | Cluster;
type ScriptArg = string | number;

export interface LuaScript<Keys extends string[], Args extends ScriptArg[]> {
  readonly name: string;
  readonly numberOfKeys: number;
  run(client: RedisClient, keys: Keys, args: Args): Promise<unknown>;
}

const FILE_NAME = /^([a-z][a-z0-9-]*)-(\d+)\.lua$/;
/** A full node (noeviction) refuses a script at its first write, before it has changed anything. */
const OUT_OF_MEMORY = /^OOM\b/;
/** A node that does not hold the script (restarted, failed over to, flushed) refuses EVALSHA before running anything. */
const NO_SCRIPT = /^NOSCRIPT\b/;
/** Replies as strings, as ioredis's own command methods ask for them. */
const AS_STRINGS = { replyEncoding: 'utf8' } as const;

/** Counted as `redis.writeRefused`, which the stack alarms on: a full cache refuses orders, coupons and sign-ins. */
function countRefusal(error: Error): never {
  if (OUT_OF_MEMORY.test(error.message)) count('redis.writeRefused', 1, { urgent: true });
  throw error;
}

/**
 * A script's declaration that it calls the functions of another Lua file, by that file's path from
 * the script's folder: `--- @include "../../limits/lua/gcra.lua"`. A path, not a bare name, so the
 * layer test can read what a script includes as an import and hold it to the capabilities' order.
 */
const INCLUDE = /^--- @include "(\.{1,2}\/[^"]+\.lua)"$/gm;
/** Any line that looks like one: what INCLUDE did not take is a malformed declaration, refused at load rather than as a nil function at EVAL. */
const INCLUDE_LIKE = /^---\s*@include/m;

/**
 * Where an included file is: at its path from the script in the source tree, else beside the
 * script in a bundle, whose lua/ folder holds every Lua file of shared/ flat (infra/bundling.ts,
 * bundleFileCopies). File names are unique across shared/'s lua/ folders, or that copy would lose one.
 */
function includedFile(path: string, script: URL): URL {
  for (const candidate of [new URL(path, script), new URL(basename(path), script)]) if (existsSync(candidate)) return candidate;
  throw new Error(`${fileURLToPath(script)} includes ${path}, which is not there`);
}

/** A script's source with each file it includes put in place of its declaration, once each, however deeply included. */
function sourceWithIncludes(file: URL, included = new Set<string>()): string {
  const source = readFileSync(file, 'utf8').replace(INCLUDE, (_, path: string) => {
    const includedUrl = includedFile(path, file);
    // By name: the same file reached by two paths, or in a bundle's flat copy, goes in once.
    const name = basename(path);
    if (included.has(name)) return '';
    included.add(name);
    return sourceWithIncludes(includedUrl, included);
  });
  if (INCLUDE_LIKE.test(source)) throw new Error(`${fileURLToPath(file)}: an include must read exactly --- @include "<path from this folder>.lua"`);
  return source;
}

/**
 * Loads `<name>-<numKeys>.lua` and runs it by EVALSHA, falling back to EVAL (which loads it) once
 * after a NOSCRIPT: a Redis restarted, failed over to or flushed. Request data only ever travels in
 * KEYS and ARGV, never in the script's source. The Lua files a script declares with
 * `--- @include "<file>.lua"` (functions several scripts call, such as gcra.lua) take the place of
 * their declarations.
 *
 * The command is built here rather than through ioredis's defineCommand, whose every call spreads
 * its arguments twice, chains a promise for the NOSCRIPT retry and gives the command a closure of
 * its own for the socket's script bookkeeping: ~3,000 instructions of `GET /me`'s one script call
 * when it read its session by a script (99,347 → 96,263 a request, and 99,154 → 95,796 in a second
 * run of `npm run instructions`).
 * defineCommand sent EVAL, the whole source, on each connection's first call; here a node that lost
 * its scripts answers one NOSCRIPT, and the round trip it costs, per script after it restarts or a
 * replica takes over.
 */
export function luaScript<Keys extends string[], Args extends ScriptArg[]>(file: URL): LuaScript<Keys, Args> {
  const match = FILE_NAME.exec(basename(file.pathname));
  if (!match) throw new Error(`Lua script file must be named <name>-<numKeys>.lua: ${file.pathname}`);
  const name = match[1]!;
  const numberOfKeys = Number(match[2]);
  const lua = sourceWithIncludes(file);
  const sha = createHash('sha1').update(lua).digest('hex');
  return {
    name,
    numberOfKeys,
    run(client, keys, args) {
      if (keys.length !== numberOfKeys) throw new Error(`${name} takes ${numberOfKeys} keys, got ${keys.length}`);
      const send = (command: 'evalsha' | 'eval', script: string) =>
        client.sendCommand(new Command(command, [script, numberOfKeys, ...keys, ...args], AS_STRINGS)) as Promise<unknown>;
      return send('evalsha', sha).catch((error: Error) => (NO_SCRIPT.test(error.message) ? send('eval', lua).catch(countRefusal) : countRefusal(error)));
    },
  };
}

/** Pairs per script call when a repair walks many buyers, so one call never holds Redis for long. */
const PAIRS_PER_CALL = 500;

/**
 * Runs a one-key script over many (buyer, value) pairs, PAIRS_PER_CALL at a time, and sums what
 * the calls return (a count of what each changed).
 */
export async function runOverPairs(
  script: LuaScript<[string], ScriptArg[]>,
  client: RedisClient,
  key: string,
  pairs: [ScriptArg, ScriptArg][],
): Promise<number> {
  let changed = 0;
  for (let i = 0; i < pairs.length; i += PAIRS_PER_CALL) {
    changed += Number(await script.run(client, [key], pairs.slice(i, i + PAIRS_PER_CALL).flat()));
  }
  return changed;
}
