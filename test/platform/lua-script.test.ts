import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { startRedis } from '../../infra/twin/services/services';
import { luaScript } from '../../shared/platform/redis/script';

// A Redis of this file's own: flushing its scripts must not send the suite's other files to NOSCRIPT.
const STATE_DIR = `.local/test-lua-script-${randomBytes(4).toString('hex')}`;
const { REDIS_URL } = process.env;
delete process.env.REDIS_URL;
const store = await startRedis(STATE_DIR, false);
process.env.REDIS_URL = REDIS_URL;
const client = new Redis(store.adminUrl);

const ECHO = new URL('../fixtures/lua/echo-arguments-1.lua', import.meta.url);
const echo = luaScript<[string], (string | number)[]>(ECHO);
const echoSha = createHash('sha1').update(readFileSync(ECHO, 'utf8')).digest('hex');

afterAll(async () => {
  client.disconnect();
  await store.stop();
  rmSync(STATE_DIR, { recursive: true, force: true });
});

describe('luaScript', () => {
  it('passes its KEYS and ARGV through and answers strings, loaded or not', async () => {
    // Act: the first call finds the script unknown to this Redis (EVAL), the second known (EVALSHA)
    const first = await echo.run(client, ['{t}:key'], ['text', 42, '']);
    const second = await echo.run(client, ['{t}:key'], ['text', 42, '']);

    // Assess
    expect(first).toEqual(['{t}:key', 'text', '42', '']);
    expect(second).toEqual(first);
  });

  it('runs after Redis lost its scripts (a restart, a failover, a flush), and leaves the script loaded again', async () => {
    // Prepare
    await echo.run(client, ['{t}:key'], ['loaded']);
    await client.script('FLUSH');

    // Act
    const reply = await echo.run(client, ['{t}:key'], ['after the flush']);

    // Assess
    expect(reply).toEqual(['{t}:key', 'after the flush']);
    expect(await client.script('EXISTS', echoSha)).toEqual([1]);
  });

  it('rejects with the script’s own error, and sends it once', async () => {
    // Prepare: the script known to Redis, so the failing call is an EVALSHA
    const takeRate = luaScript<[string], [number, number]>(new URL('../../shared/limits/lua/rate-take-1.lua', import.meta.url));
    await takeRate.run(client, ['{t}:a-rate'], [1_000, 0]);
    await client.hset('{t}:a-hash', 'field', 'value');
    const before = await scriptCalls();

    // Act
    const failing = takeRate.run(client, ['{t}:a-hash'], [1_000, 0]);

    // Assess
    await expect(failing).rejects.toThrow(/WRONGTYPE/);
    expect(await scriptCalls()).toEqual({ evalsha: before.evalsha + 1, eval: before.eval });
  });
});

/** How many EVALSHA and EVAL calls this Redis has run. */
async function scriptCalls(): Promise<{ evalsha: number; eval: number }> {
  const stats = (await client.info('commandstats')) as string;
  const calls = (command: string) => Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(stats)?.[1] ?? 0);
  return { evalsha: calls('evalsha'), eval: calls('eval') };
}
