import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleFileCopies } from '../../infra/bundling';
import { luaScript } from '../../shared/platform/redis/script';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCRIPT = /^[a-z][a-z0-9-]*-\d+\.lua$/;

/** Every script (not an included file) of shared/, by its path. */
const sourceScripts = readdirSync(join(ROOT, 'shared'), { recursive: true, encoding: 'utf8' })
  .filter((path) => /(^|\/)lua\/[^/]+\.lua$/.test(path) && SCRIPT.test(path.split('/').at(-1)!))
  .map((path) => join(ROOT, 'shared', path));

const scratch = mkdtempSync(join(tmpdir(), 'lua-includes-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('Lua includes', () => {
  it('resolves every script’s includes in the source tree, across capabilities', () => {
    expect(sourceScripts.length).toBeGreaterThan(20);
    for (const path of sourceScripts) expect(() => luaScript(pathToFileURL(path)), path).not.toThrow();
  });

  it('resolves them in a bundle, whose lua/ folder holds every script flat', () => {
    const bundle = join(scratch, 'bundle');
    for (const command of bundleFileCopies(ROOT, 'create-order', bundle)) execFileSync('sh', ['-c', command]);
    const copied = readdirSync(join(bundle, 'lua')).filter((name) => SCRIPT.test(name));
    expect(copied.length).toBe(sourceScripts.length);
    for (const name of copied) expect(() => luaScript(pathToFileURL(join(bundle, 'lua', name))), name).not.toThrow();
  });

  it('refuses a script whose include is nowhere', () => {
    const lua = join(scratch, 'lonely', 'lua');
    mkdirSync(lua, { recursive: true });
    writeFileSync(join(lua, 'lonely-1.lua'), '--- @include "nowhere.lua"\nreturn 1\n');
    expect(() => luaScript(pathToFileURL(join(lua, 'lonely-1.lua')))).toThrow(/includes nowhere\.lua, found 0 times/);
  });

  it('refuses a malformed include rather than leaving it a comment', () => {
    const lua = join(scratch, 'sloppy', 'lua');
    mkdirSync(lua, { recursive: true });
    writeFileSync(join(lua, 'sloppy-1.lua'), '--- @include "gcra.lua" \r\nreturn 1\n');
    expect(() => luaScript(pathToFileURL(join(lua, 'sloppy-1.lua')))).toThrow(/an include must read exactly/);
  });
});
