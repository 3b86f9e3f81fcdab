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

  it('names every Lua file of shared/ once, so a bundle can hold them flat', () => {
    const names = readdirSync(join(ROOT, 'shared'), { recursive: true, encoding: 'utf8' })
      .filter((path) => /(^|\/)lua\/[^/]+\.lua$/.test(path))
      .map((path) => path.split('/').at(-1)!);
    expect(names.length).toBeGreaterThan(sourceScripts.length);
    expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
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
    writeFileSync(join(lua, 'lonely-1.lua'), '--- @include "../../limits/lua/nowhere.lua"\nreturn 1\n');
    expect(() => luaScript(pathToFileURL(join(lua, 'lonely-1.lua')))).toThrow(/includes \.\.\/\.\.\/limits\/lua\/nowhere\.lua, which is not there/);
  });

  it.each([
    ['trailing blanks', '--- @include "./gcra.lua" \r\n'],
    ['a bare name, not a path', '--- @include "gcra.lua"\n'],
  ])('refuses a malformed include (%s) rather than leaving it a comment', (_, line) => {
    const lua = join(scratch, 'sloppy', 'lua');
    mkdirSync(lua, { recursive: true });
    writeFileSync(join(lua, 'gcra.lua'), 'local x = 1\n');
    writeFileSync(join(lua, 'sloppy-1.lua'), `${line}return 1\n`);
    expect(() => luaScript(pathToFileURL(join(lua, 'sloppy-1.lua')))).toThrow(/an include must read exactly/);
  });
});
