/**
 * A read path's floor (baselines/floor.ts): one Redis GET of a key as large as what the path reads,
 * behind the same gateway, answering a body as large as the path's. What the path reads is measured,
 * not guessed: the bytes Redis sends per request over a sample of the path's own requests.
 */
import { shardsOf, infoSum } from './redis-shards';
import { round } from './round';

export const FLOOR_PATH = '/__baseline/floor';

/** RESP's framing of a bulk string: `$<length>\r\n` and the closing `\r\n`, about this many bytes for the sizes read here. */
const BULK_FRAMING = 8;

export interface FloorShape {
  /** Bytes Redis sent per request of the path. */
  redisBytes: number;
  /** Bytes of the path's answer body. */
  bodyBytes: number;
}

/** The floor's request for this shape: its key set first, a value whose GET sends Redis's client what the path's calls sent. */
export async function floorRequest(redisUrl: string, shape: FloorShape): Promise<{ path: string }> {
  const redis = await shardsOf(redisUrl);
  try {
    const key = `bench:floor:${shape.redisBytes}`;
    await redis.client.set(key, 'v'.repeat(Math.max(1, Math.round(shape.redisBytes) - BULK_FRAMING)));
    return { path: `${FLOOR_PATH}?key=${encodeURIComponent(key)}&body=${Math.round(shape.bodyBytes)}` };
  } finally {
    redis.close();
  }
}

/** What `run` gives, with the bytes every Redis master sent to its clients per request it reports having made. */
export async function redisBytesPerRequest<T extends { requests: number }>(
  redisUrl: string,
  run: () => Promise<T>,
): Promise<{ result: T; bytesPerRequest: number }> {
  const redis = await shardsOf(redisUrl);
  const bytesSent = () => infoSum(redis.shards, 'stats', /total_net_output_bytes:(\d+)/);
  try {
    const before = await bytesSent();
    const result = await run();
    // The INFO answers are counted too: a few KB over thousands of requests.
    return { result, bytesPerRequest: round(((await bytesSent()) - before) / Math.max(1, result.requests), 1) };
  } finally {
    redis.close();
  }
}
