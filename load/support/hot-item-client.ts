/**
 * One client process of the hot-item bench: `tsx load/support/hot-item-client.ts <item id>
 * <first buyer> <buyers> <in flight>`, with the twin's environment (pointAtTwin's) inherited.
 * Connects and loads the scripts, prints `ready`, waits for a line on stdin, then reserves one
 * unit for each of its buyers through the one reservation path (reserve: the script, and moves
 * between buckets when the buyer's runs dry), `in flight` at a time over its shared connection,
 * and prints one JSON line: the answers counted, and what false_sold_out needs (epoch ms).
 */
import { createInterface } from 'node:readline';
import { redis } from '../../shared/platform/clients/redis';
import { reserve } from '../../shared/sale/orders/sale';
import { LOCAL_SOURCE } from '../../infra/twin/load-test-sources';

const [itemId, first, count, inFlight] = process.argv.slice(2) as [string, string, string, string];
const now = () => performance.timeOrigin + performance.now();

// Warm: the connection made, the script loaded (a sale that does not exist answers NOT_ON_SALE).
await reserve({ itemId: `${itemId}-warm-up`, userId: 1, quantity: 1, idempotencyKey: 'warm-up', source: LOCAL_SOURCE }).catch(() => undefined);
process.stdout.write('ready\n');
await new Promise<void>((resolve) => createInterface({ input: process.stdin }).once('line', () => resolve()));

const outcomes: Record<string, number> = {};
const soldOutAnsweredAt: number[] = [];
const latencies: number[] = [];
let lastReservedAskedAt = 0;
let next = 0;
await Promise.all(
  Array.from({ length: Number(inFlight) }, async () => {
    while (next < Number(count)) {
      const buyer = Number(first) + next++;
      const askedAt = now();
      const outcome = await reserve({ itemId, userId: buyer, quantity: 1, idempotencyKey: 'hot', source: LOCAL_SOURCE }).then(
        () => 'reserved',
        (error: { code?: string; message?: string }) => error.code ?? `error: ${error.message?.slice(0, 60)}`,
      );
      const answeredAt = now();
      latencies.push(answeredAt - askedAt);
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
      if (outcome === 'reserved') lastReservedAskedAt = Math.max(lastReservedAskedAt, askedAt);
      if (outcome === 'SOLD_OUT') soldOutAnsweredAt.push(answeredAt);
    }
  }),
);
process.stdout.write(`${JSON.stringify({ outcomes, lastReservedAskedAt, soldOutAnsweredAt, latencies })}\n`);
redis().disconnect();
