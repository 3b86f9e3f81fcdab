/**
 * Flash-sale orders, two parts in one run.
 *
 * End to end: the reference run — BUYERS distinct signed-in buyers, as many units, quantity 1, over
 * HTTP as fast as the machine allows — then the writer drains the queue and the invariants are
 * checked. The FOR UPDATE baseline runs the same way on a fresh item. Surge and the baseline run
 * A B B A and are averaged, so neither gains from going second on a warmed-up twin.
 *
 * Contended resource: the limit left once Lambda scales the fleet out — the reservation script
 * alone against the baseline's locked transaction, each from many concurrent connections.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createPool, type RowDataPacket } from 'mysql2/promise';
import type { Scenario } from '../bench';
import { adminCookie, adminPut, emulatorCalls, handOffShape, inParallel, pointAtTwin, race, releaseSharedClients, signedInCrowd, timed } from '../support/crowd';
import { meanLoad, round, startCpuMeter } from '../support/measure';
import { reserve } from '../../shared/orders/sale';
import { LOCAL_SOURCE } from '../../test/support/orders';
import { placeOrderForUpdate } from '../baselines/orders-for-update';

const BUYERS = Number(process.env.BENCH_BUYERS ?? 10_000);
/** The script runs ~20× faster than the lock: more units give it a window long enough to measure. */
const CONTENDED_SCRIPT_UNITS = 50_000;
const CONTENDED_LOCKED_UNITS = 10_000;
const CONTENDED_CONCURRENCY = 50;
const CONTENDED_WARM_UP = 1_000;

export const orders: Scenario = async ({ twin, connections, log }) => {
  pointAtTwin(twin, { DATABASE_POOL_SIZE: String(CONTENDED_CONCURRENCY) });
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

  /** One end-to-end run through Surge on a fresh item: the race, the drain, then the invariants. */
  async function surgeRun(label: string) {
    const itemId = await openItem(`flash-${tag}-${label}`, BUYERS);
    const [redisBefore, sqsBefore] = await Promise.all([commandStats(), emulatorCalls(twin)]);
    const cpu = startCpuMeter(twin.pids);
    const { result, ...handOff } = await handOffShape(twin, (r) => r.race.ids.length, async () => {
      const race = await buyAll(`/items/${itemId}/orders`, `Surge ${label}: POST /items/{id}/orders`);
      const drained = await timed(async () => {
        const deadline = Date.now() + 120_000;
        while ((await itemFacts(itemId)).rows < race.ids.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      });
      return { race, drained };
    });
    const { race, drained } = result;
    const accepted = race.ids.length;
    const cpuPerOrder = cpu.perRequest(accepted || 1);
    const [redisAfter, sqsAfter] = await Promise.all([commandStats(), emulatorCalls(twin)]);
    const sqsPerOrder = Object.fromEntries(
      Object.entries(sqsAfter)
        .filter(([name]) => !name.startsWith('S3') && (sqsBefore[name] ?? 0) < sqsAfter[name]!)
        .map(([name, n]) => [name, round((n - (sqsBefore[name] ?? 0)) / (accepted || 1), 4)]),
    );
    return {
      race,
      accepted,
      drainSeconds: drained.seconds,
      handOff,
      cpuPerOrder,
      sqsPerOrder,
      redisPerOrder: {
        evalsha: round((redisAfter.evalsha - redisBefore.evalsha) / (accepted || 1), 3),
        commands_incl_script_internals: round((redisAfter.total - redisBefore.total) / (accepted || 1), 3),
      },
      facts: await itemFacts(itemId),
      finalStock: Number(await redis.hget(`{item:${itemId}}:sale`, 'stock')),
      lost: await missingRows(race.ids),
    };
  }

  async function baselineRun(label: string) {
    const itemId = await openItem(`locked-${tag}-${label}`, BUYERS);
    const race = await buyAll(`/__baseline/items/${itemId}/orders`, `baseline ${label}: FOR UPDATE`);
    return { race, facts: await itemFacts(itemId) };
  }

  // End to end, A B B A: whichever runs first on a fresh twin pays more, so each goes first once.
  const surgeRuns = [await surgeRun('1')];
  const baselineRuns = [await baselineRun('1'), await baselineRun('2')];
  surgeRuns.push(await surgeRun('2'));
  const surgeLoad = meanLoad(surgeRuns.map((r) => r.race.load));
  const baselineLoad = meanLoad(baselineRuns.map((r) => r.race.load));

  // The contended resource alone, A B B A as well.
  async function scriptRate(label: string, units = CONTENDED_SCRIPT_UNITS) {
    const itemId = await openItem(`lua-${tag}-${label}`, units);
    log(`contended ${label}: reservation script, ${CONTENDED_CONCURRENCY} in flight`);
    const run = await timed(() => inParallel(units, CONTENDED_CONCURRENCY, (i) => reserve({ itemId, userId: i + 1, quantity: 1, idempotencyKey: `c${i}`, source: LOCAL_SOURCE })));
    return { rate: round(units / run.seconds), failures: run.value };
  }
  async function lockedRate(label: string, units = CONTENDED_LOCKED_UNITS) {
    const itemId = await openItem(`fu-${tag}-${label}`, units);
    log(`contended ${label}: FOR UPDATE transaction, ${CONTENDED_CONCURRENCY} connections`);
    const run = await timed(() => inParallel(units, CONTENDED_CONCURRENCY, (i) => placeOrderForUpdate(db, itemId, i + 1, 1)));
    return { rate: round(units / run.seconds), failures: run.value };
  }
  // Both sides' clients and code paths warmed up in this process before anything is timed.
  await scriptRate('warm-up', CONTENDED_WARM_UP);
  await lockedRate('warm-up', CONTENDED_WARM_UP);
  const scriptRuns = [await scriptRate('1')];
  const lockedRuns = [await lockedRate('1'), await lockedRate('2')];
  scriptRuns.push(await scriptRate('2'));
  const meanRate = (runs: { rate: number }[]) => round(runs.reduce((sum, r) => sum + r.rate, 0) / runs.length);
  const luaRate = meanRate(scriptRuns);
  const forUpdateRate = meanRate(lockedRuns);
  log(`contended: script ${luaRate}/s, FOR UPDATE ${forUpdateRate}/s (means of two)`);

  await db.end();
  redis.disconnect();
  await releaseSharedClients();
  const last = surgeRuns[surgeRuns.length - 1]!;
  return {
    load: surgeLoad,
    baseline: {
      ...baselineLoad,
      statuses: baselineRuns.map((r) => r.race.statuses),
      rows: baselineRuns.map((r) => r.facts.rows),
      oversold: baselineRuns.map((r) => Math.max(0, r.facts.sold - r.facts.initial)),
    },
    extra: {
      runs: { surge_rps: surgeRuns.map((r) => r.race.load.rps), baseline_rps: baselineRuns.map((r) => r.race.load.rps) },
      statuses: surgeRuns.map((r) => r.race.statuses),
      buyers: BUYERS,
      ratio_to_baseline: round(surgeLoad.rps / baselineLoad.rps, 2),
      p99_ratio_baseline_to_surge: round(baselineLoad.p99_ms / Math.max(1, surgeLoad.p99_ms), 2),
      drain_s: round(Math.max(...surgeRuns.map((r) => r.drainSeconds)), 2),
      hand_off: surgeRuns.map((r) => r.handOff),
      // From the second (warm) run; the first also pays for warming the twin up.
      cpu_ms_per_order: last.cpuPerOrder,
      redis_calls_per_order: last.redisPerOrder,
      sqs_calls_per_order: last.sqsPerOrder,
      contended: {
        script_per_s: luaRate,
        for_update_per_s: forUpdateRate,
        ratio: round(luaRate / forUpdateRate, 1),
        runs: { script_per_s: scriptRuns.map((r) => r.rate), for_update_per_s: lockedRuns.map((r) => r.rate) },
        script_failures: scriptRuns.map((r) => r.failures),
        for_update_failures: lockedRuns.map((r) => r.failures),
      },
    },
    // Every Surge run must hold each of these on its own.
    invariants: {
      final_stock: { expected: [0, 0], actual: surgeRuns.map((r) => r.finalStock) },
      accepted: { expected: [BUYERS, BUYERS], actual: surgeRuns.map((r) => r.accepted) },
      rows: { expected: [BUYERS, BUYERS], actual: surgeRuns.map((r) => r.facts.rows) },
      duplicates: { expected: [0, 0], actual: surgeRuns.map((r) => r.facts.rows - r.facts.buyers) },
      oversold: { expected: [0, 0], actual: surgeRuns.map((r) => Math.max(0, r.facts.sold - r.facts.initial)) },
      lost: { expected: [0, 0], actual: surgeRuns.map((r) => r.lost) },
      baseline_rows_match_accepted: { expected: baselineRuns.map((r) => r.race.ids.length), actual: baselineRuns.map((r) => r.facts.rows) },
    },
  };
};
