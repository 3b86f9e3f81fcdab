import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { registeredScriptCodes } from '../../shared/platform/redis/script-codes';
import { importEveryCapabilitysCodes } from '../support/codes';

const SHARED = new URL('../../shared/', import.meta.url);

/** Every Lua file of shared/ (<capability>/lua/*.lua), by its path under shared/. */
const luaFiles = readdirSync(SHARED, { recursive: true, encoding: 'utf8' })
  .filter((path) => /(^|\/)lua\/[^/]+\.lua$/.test(path))
  .sort();

/** A negative number standing alone: not the tail of a name such as rate-take-1.lua. */
const NEGATIVE = /(?<![\w.-])-(\d+)\b/g;
/** A negative code a statement returns, alone or in a reply table: `return -10`, `return { -15, wait }`, `return { held, -23, … }`. */
const RETURNED = /\breturn\s*(?:\{[^}\n]*?)?(?<![\w.-])-(\d+)\b/g;

const codesIn = (text: string, pattern: RegExp) => new Set([...text.matchAll(pattern)].map((m) => -Number(m[1])));

function partsOf(path: string): { header: string; body: string } {
  const source = readFileSync(new URL(path, SHARED), 'utf8');
  const header = /^--\[\[([\s\S]*?)\]\]/.exec(source);
  if (!header) throw new Error(`${path} opens with no --[[ … ]] header`);
  return { header: header[1]!, body: source.slice(header[0].length) };
}

await importEveryCapabilitysCodes();
const tableCodes = new Set(registeredScriptCodes().keys());

describe('Lua return codes', () => {
  it('are registered by the capabilities', () => {
    expect(tableCodes.size).toBeGreaterThan(20);
  });

  it('finds the Lua files', () => {
    expect(luaFiles.length).toBeGreaterThan(20);
  });

  it.each(luaFiles)('%s: its header names only codes of the table, and every code its body returns', (path) => {
    const { header, body } = partsOf(path);
    const named = codesIn(header, NEGATIVE);
    for (const code of named) expect(tableCodes.has(code), `${path} names ${code}, which no capability's codes.ts registers`).toBe(true);
    for (const code of codesIn(body, RETURNED)) expect(named.has(code), `${path} returns ${code} without naming it in its header`).toBe(true);
  });

  it('has no code that no script returns', () => {
    const returned = new Set(luaFiles.flatMap((path) => [...codesIn(partsOf(path).body, RETURNED)]));
    expect([...tableCodes].filter((code) => !returned.has(code))).toEqual([]);
  });
});
