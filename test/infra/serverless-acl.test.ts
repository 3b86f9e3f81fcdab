import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVERLESS_ACCESS_STRING } from '../../infra/redis';
import { freePort } from '../../infra/twin/services/processes';
import { redisCommand, startRedisServer, type TestRedisServer } from '../../infra/twin/faults/redis-server';
import { FillWaiters } from '../../shared/cache/waiters';

const TOKEN = 'serverless-user-token';
/** What a fill script does last (shared/cache/lua/cache-fill-2.lua): publish the entry on its shard channel. */
const PUBLISH_AS_A_FILL = "return redis.call('SPUBLISH', ARGV[1], ARGV[2])";

/**
 * The Serverless cache's user, on a redis-server of this file's own: the user `default`, reset to
 * nothing and given exactly the stack's access string and the token, as ElastiCache applies it,
 * so the functions' password-only AUTH signs in as it. Redis 7 gives a user no channels unless its
 * string names them (`acl-pubsub-default resetchannels`).
 */
describe('the Serverless cache user’s access string, on a real redis-server', () => {
  let server: TestRedisServer;
  const clients: Redis[] = [];
  const client = () => {
    const redis = new Redis(server.port, '127.0.0.1', { password: TOKEN, maxRetriesPerRequest: 0 });
    clients.push(redis);
    return redis;
  };

  beforeAll(async () => {
    server = await startRedisServer(await freePort());
    await redisCommand(server.port, 'ACL', 'SETUSER', 'default', 'reset', ...SERVERLESS_ACCESS_STRING.split(' '), `>${TOKEN}`);
  });

  afterAll(async () => {
    for (const redis of clients) redis.disconnect();
    await server?.kill();
  });

  it('runs where a user gets no channels its string does not name', async () => {
    expect(await client().call('CONFIG', 'GET', 'acl-pubsub-default')).toEqual(['acl-pubsub-default', 'resetchannels']);
  });

  it('lets a fill wake its waiters: SSUBSCRIBE, and SPUBLISH from a script', async () => {
    // Prepare: the cache's own waiters, on a subscriber connection of the user.
    const waiters = new FillWaiters(client);
    const publisher = client();

    // Act: once subscribed, a fill publishes its entry.
    const entry = await waiters.wait('{catalog}:fill', 10_000, async () => {
      await publisher.eval(PUBLISH_AS_A_FILL, 0, '{catalog}:fill', 'v{"programs":[]}');
      return false;
    });

    // Assess
    waiters.close();
    expect(entry).toBe('{"programs":[]}');
  });
});
