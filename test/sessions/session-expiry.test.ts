import { beforeAll, describe, expect, it } from 'vitest';
import { redis } from '../../shared/platform/clients/redis';
import * as store from '../../shared/sessions/store';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('session lifetimes', () => {
  beforeAll(() => {
    // Read on the store's first use in this file's process, as on a cold start.
    // An absolute lifetime well past the sliding test's 2 s of use, so only the idle timeout can end it.
    process.env.SESSION_IDLE_SECONDS = '1';
    process.env.SESSION_ABSOLUTE_SECONDS = '4';
  });

  it('ends a session left idle past the idle timeout', async () => {
    const handle = await store.createSession({ id: 9_000_001, role: 'user', email: 'idle@surge.test' });

    // Waits out the idle timeout on Redis's clock (the key's TTL): a slower machine only waits longer.
    await sleep(1_300);

    await expect(store.resolveSession(handle)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it('slides the idle timeout on each use', async () => {
    const handle = await store.createSession({ id: 9_000_002, role: 'user', email: 'busy@surge.test' });

    // Half the idle timeout apart: each use has the other half (500 ms) for its one round trip.
    for (let i = 0; i < 4; i++) {
      await sleep(500);
      await store.resolveSession(handle);
    }

    await expect(store.resolveSession(handle)).resolves.toMatchObject({ userId: 9_000_002 });
  });

  it('ends a session at its absolute lifetime however busy it is', async () => {
    // Created as if 3.5 s ago, so 0.5 s of its 4 s lifetime remain: time enough for one round trip.
    const handle = await store.createSession({ id: 9_000_003, role: 'user', email: 'old@surge.test' }, Date.now() - 3_500);
    await store.resolveSession(handle);

    // Past the lifetime by any clock, the session's own or Redis's: a slower machine only waits longer.
    await sleep(700);

    await expect(store.resolveSession(handle)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    // The refusing request slid the key too; it deleted it, rather than leave it for a stale cookie to keep.
    expect(await redis().exists(store.sessionKey(handle))).toBe(0);
  });
});
