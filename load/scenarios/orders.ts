/**
 * Flash-sale orders, two parts in one run.
 *
 * End to end: the reference run — BUYERS distinct signed-in buyers, as many units, quantity 1, over
 * HTTP as fast as the machine allows — then the writer drains the queue and the invariants are
 * checked. The FOR UPDATE baseline runs the same way on a fresh item.
 *
 * Contended resource: the limit left once Lambda scales the fleet out — the reservation script
 * alone against the baseline's locked transaction, each from many concurrent connections.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createPool, type RowDataPacket } from 'mysql2/promise';
import type { Scenario } from '../bench';
import { adminCookie, adminPut, emulatorCalls, inParallel, pointAtTwin, race, releaseSharedClients, signedInCrowd, timed } from '../support/crowd';
import { round, startCpuMeter } from '../support/measure';

const BUYERS = Number(process.env.BENCH_BUYERS ?? 10_000);
const CONTENDED_UNITS = 10_000;
const CONTENDED_CONCURRENCY = 50;

export const orders: Scenario = async ({ twin, connections, log }) => {
  pointAtTwin(twin, { DATABASE_POOL_SIZE: String(CONTENDED_CONCURRENCY) });
  const { reserve } = await import('../../shared/orders/reservations');
  const { placeOrderForUpdate } = await import('../baselines/orders-for-update');
  const tag = randomBytes(3).toString('hex');
  const db = createPool({ uri: twin.databaseUrl, connectionLimit: CONTENDED_CONCURRENCY });
  const redis = new Redis(twin.redisUrl);
  const admin = await adminCookie(twin);
  const openItem = async (itemId: string, quantity: number) => {
    await adminPut(twin, admin, `/items/${itemId}/stock`, { quantity, perUserLimit: 1 });
    return itemId;
  };

  log(`creating ${BUYERS} signed-in buyers`);
  const { cookies } = await signedInCrowd(twin, BUYERS);
  const buyAll = (path: string, label: string) =>
    race(twin, { path, cookies, connections, body: '{"quantity":1}', idempotencyPrefix: `bench-${tag}`, idField: 'orderId' }, label, log);

  async function itemFacts(itemId: string) {
    const [[rows], [item]] = await Promise.all([
      db.query<RowDataPacket[]>('SELECT COUNT(*) AS n, COUNT(DISTINCT user_id) AS buyers FROM orders WHERE item_id = ?', [itemId]),
      db.query<RowDataPacket[]>('SELECT initial_stock, sold FROM items WHERE id = ?', [itemId]),
    ]);
    return { rows: Number(rows[0]!.n), buyers: Number(rows[0]!.buyers), initial: Number(item[0]!.initial_stock), sold: Number(item[0]!.sold) };
  }

  async function missingRows(orderIds: string[]): Promise<number> {
    let found = 0;
    for (let i = 0; i < orderIds.length; i += 1000) {
      const [rows] = await db.query<RowDataPacket[]>('SELECT COUNT(*) AS n FROM orders WHERE id IN (?)', [orderIds.slice(i, i + 1000)]);
      found += Number(rows[0]!.n);
    }
    return orderIds.length - found;
  }

  const commandStats = async () => {
    const info = await redis.info('commandstats');
    const calls = (name: string) => Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
    return { evalsha: calls('evalsha') + calls('eval'), total: Number(/total_commands_processed:(\d+)/.exec(await redis.info('stats'))![1]) };
  };

  // End to end through Surge.
  const surgeItem = await openItem(`flash-${tag}`, BUYERS);
  const [redisBefore, sqsBefore] = await Promise.all([commandStats(), emulatorCalls(twin)]);
  const cpu = startCpuMeter(twin.pids);
  const surge = await buyAll(`/items/${surgeItem}/orders`, 'Surge: POST /items/{id}/orders');
  const drained = await timed(async () => {
    const deadline = Date.now() + 120_000;
    while ((await itemFacts(surgeItem)).rows < surge.ids.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  });
  const accepted = surge.ids.length;
  const cpuPerOrder = cpu.perRequest(accepted || 1);
  const [redisAfter, sqsAfter] = await Promise.all([commandStats(), emulatorCalls(twin)]);
  const facts = await itemFacts(surgeItem);
  const finalStock = Number(await redis.hget(`{item:${surgeItem}}:sale`, 'stock'));
  const lost = await missingRows(surge.ids);
  const sqsPerOrder = Object.fromEntries(
    Object.entries(sqsAfter)
      .filter(([name]) => !name.startsWith('S3') && (sqsBefore[name] ?? 0) < sqsAfter[name]!)
      .map(([name, n]) => [name, round((n - (sqsBefore[name] ?? 0)) / (accepted || 1), 4)]),
  );

  // End to end through the FOR UPDATE baseline.
  const baselineItem = await openItem(`locked-${tag}`, BUYERS);
  const baseline = await buyAll(`/__baseline/items/${baselineItem}/orders`, 'baseline: FOR UPDATE');
  const baselineFacts = await itemFacts(baselineItem);

  // The contended resource alone.
  const luaItem = await openItem(`lua-${tag}`, CONTENDED_UNITS);
  log(`contended: reservation script, ${CONTENDED_CONCURRENCY} in flight`);
  const lua = await timed(() =>
    inParallel(CONTENDED_UNITS, CONTENDED_CONCURRENCY, (i) => reserve({ itemId: luaItem, userId: i + 1, quantity: 1, idempotencyKey: `c${i}` })),
  );
  const lockedItem = await openItem(`fu-${tag}`, CONTENDED_UNITS);
  log(`contended: FOR UPDATE transaction, ${CONTENDED_CONCURRENCY} connections`);
  const locked = await timed(() => inParallel(CONTENDED_UNITS, CONTENDED_CONCURRENCY, (i) => placeOrderForUpdate(db, lockedItem, i + 1, 1)));
  const luaRate = round(CONTENDED_UNITS / lua.seconds);
  const lockedRate = round(CONTENDED_UNITS / locked.seconds);
  log(`contended: script ${luaRate}/s, FOR UPDATE ${lockedRate}/s`);

  await db.end();
  redis.disconnect();
  await releaseSharedClients();
  return {
    load: surge.load,
    baseline: { ...baseline.load, statuses: baseline.statuses, rows: baselineFacts.rows, oversold: Math.max(0, baselineFacts.sold - baselineFacts.initial) },
    extra: {
      statuses: surge.statuses,
      buyers: BUYERS,
      ratio_to_baseline: round(surge.load.rps / baseline.load.rps, 2),
      p99_ratio_baseline_to_surge: round(baseline.load.p99_ms / Math.max(1, surge.load.p99_ms), 2),
      drain_s: round(drained.seconds, 2),
      cpu_ms_per_order: cpuPerOrder,
      redis_calls_per_order: {
        evalsha: round((redisAfter.evalsha - redisBefore.evalsha) / (accepted || 1), 3),
        commands_incl_script_internals: round((redisAfter.total - redisBefore.total) / (accepted || 1), 3),
      },
      sqs_calls_per_order: sqsPerOrder,
      contended: {
        script_per_s: luaRate,
        for_update_per_s: lockedRate,
        ratio: round(luaRate / lockedRate, 1),
        script_failures: lua.value,
        for_update_failures: locked.value,
      },
    },
    invariants: {
      final_stock: { expected: 0, actual: finalStock },
      accepted: { expected: BUYERS, actual: accepted },
      rows: { expected: BUYERS, actual: facts.rows },
      duplicates: { expected: 0, actual: facts.rows - facts.buyers },
      oversold: { expected: 0, actual: Math.max(0, facts.sold - facts.initial) },
      lost: { expected: 0, actual: lost },
      baseline_rows_match_accepted: { expected: baseline.ids.length, actual: baselineFacts.rows },
    },
  };
};
