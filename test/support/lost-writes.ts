import { redis } from '../../shared/platform/clients/redis';
import { keysMatching } from './redis-nodes';

/**
 * A checkpoint of every key of some hash tags (an owner's, or all its buckets'), and a way back to
 * it: what a failover under asynchronous replication (or a restart from an AOF a second behind)
 * does to the writes made since. Each key is DUMPed and later RESTOREd whole, so the state returns
 * exactly, script effects and all; one transaction per tag, as each is one slot.
 */
export async function checkpoint(tags: string | string[]): Promise<() => Promise<void>> {
  const undos = await Promise.all([tags].flat().map(checkpointOne));
  return async () => {
    for (const undo of undos) await undo();
  };
}

async function checkpointOne(tag: string): Promise<() => Promise<void>> {
  const pattern = `${tag.replace(/[[\]*?{}]/g, '\\$&')}*`;
  const keys = await keysMatching(pattern);
  const dumps = await Promise.all(keys.map(async (key) => [key, await redis().dumpBuffer(key), await redis().pttl(key)] as const));
  return async () => {
    const now = await keysMatching(pattern);
    const multi = redis().multi();
    if (now.length) multi.del(...now);
    for (const [key, dump, ttl] of dumps) if (dump) multi.restore(key, ttl > 0 ? ttl : 0, dump);
    await multi.exec();
  };
}
