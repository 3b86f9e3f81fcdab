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
import { insertUsers } from '../../infra/local/seed';
import type { Scenario } from '../bench';
import { drive, round, startCpuMeter, type LoadResult } from '../support/measure';

const BUYERS = Number(process.env.BENCH_BUYERS ?? 10_000);
const CONTENDED_UNITS = 10_000;
const CONTENDED_CONCURRENCY = 50;

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; seconds: number }> {
  const start = process.hrtime.bigint();
  const value = await fn();
  return { value, seconds: Number(process.hrtime.bigint() - start) / 1e9 };
}

async function inParallel(count: number, concurrency: number, fn: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  let failures = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        await fn(i).catch(() => (failures += 1));
      }
    }),
  );
  return failures;
}

export const orders: Scenario = async ({ twin, connections, log }) => {
  Object.assign(process.env, {
    REDIS_URL: twin.redisUrl,
    DATABASE_URL: twin.databaseUrl,
    DATABASE_POOL_SIZE: String(CONTENDED_CONCURRENCY),
    AWS_ENDPOINT_URL: twin.emulatorUrl,
    ORDER_QUEUE_URL: twin.queues.orders!.url,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
  });
  const { cookieValue, createSession } = await import('../../shared/sessions/store');
  const { reserve } = await import('../../shared/orders/reservations');
  const { placeOrderForUpdate } = await import('../baselines/orders-for-update');
  const tag = randomBytes(3).toString('hex');
  const db = createPool({ uri: twin.databaseUrl, connectionLimit: CONTENDED_CONCURRENCY });
  const redis = new Redis(twin.redisUrl);

  const admin = await fetch(`${twin.url}/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'admin@surge.test', password: 'surge-admin-password' }),
  });
  const adminCookie = admin.headers.getSetCookie()[0]!.split(';')[0]!;
  async function openItem(itemId: string, quantity: number) {
    const res = await fetch(`${twin.url}/items/${itemId}/stock`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', cookie: adminCookie },
      body: JSON.stringify({ quantity, perUserLimit: 1 }),
    });
    if (res.status !== 200) throw new Error(`could not open ${itemId}: ${res.status} ${await res.text()}`);
    return itemId;
  }

  log(`creating ${BUYERS} signed-in buyers`);
  const users = await insertUsers(twin.databaseUrl, Array.from({ length: BUYERS }, (_, i) => `buyer-${tag}-${i}@surge.test`), `bench-${tag}`);
  const cookies = await Promise.all(users.map(async (u) => `sid=${cookieValue(await createSession(u))}`));

  async function buyAll(path: string, label: string) {
    let next = 0;
    const statuses: Record<string, number> = {};
    const orderIds: string[] = [];
    const load = await drive(
      {
        url: twin.url,
        connections,
        amount: BUYERS,
        timeout: 30,
        requests: [
          {
            method: 'POST',
            path,
            body: '{"quantity":1}',
            setupRequest: (req) => {
              const i = next++ % BUYERS;
              return { ...req, headers: { 'content-type': 'application/json', cookie: cookies[i]!, 'idempotency-key': `bench-${tag}-${i}` } };
            },
            onResponse: (status, body) => {
              statuses[status] = (statuses[status] ?? 0) + 1;
              if (status === 202 || status === 201) orderIds.push(JSON.parse(body).orderId);
            },
          },
        ],
      },
      label,
      log,
    );
    return { load, statuses, orderIds };
  }

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
  // Counted by the emulator itself: every SQS call the twin made, the gateway's and the consumers'.
  const sqsStats = async () => ((await (await fetch(`${twin.emulatorUrl}/__twin/stats`)).json()) as { calls: Record<string, number> }).calls;

  // End to end through Surge.
  const surgeItem = await openItem(`flash-${tag}`, BUYERS);
  const [redisBefore, sqsBefore] = await Promise.all([commandStats(), sqsStats()]);
  const cpu = startCpuMeter({
    gateway: twin.pids.gateway,
    consumers: twin.pids.consumers,
    redis: twin.pids.redis,
    mariadb: twin.pids.database,
    emulator: twin.pids.emulator,
  });
  const surge = await buyAll(`/items/${surgeItem}/orders`, 'Surge: POST /items/{id}/orders');
  const drained = await timed(async () => {
    const deadline = Date.now() + 120_000;
    while ((await itemFacts(surgeItem)).rows < surge.orderIds.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  });
  const accepted = surge.orderIds.length;
  const cpuPerOrder = cpu.perRequest(accepted || 1);
  const [redisAfter, sqsAfter] = await Promise.all([commandStats(), sqsStats()]);
  const facts = await itemFacts(surgeItem);
  const finalStock = Number(await redis.hget(`{item:${surgeItem}}:sale`, 'stock'));
  const lost = await missingRows(surge.orderIds);
  const sqsPerOrder = Object.fromEntries(
    Object.entries(sqsAfter)
      .filter(([name]) => !name.startsWith('S3'))
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
  const locked = await timed(() =>
    inParallel(CONTENDED_UNITS, CONTENDED_CONCURRENCY, (i) => placeOrderForUpdate(db, lockedItem, i + 1, 1)),
  );
  const luaRate = round(CONTENDED_UNITS / lua.seconds);
  const lockedRate = round(CONTENDED_UNITS / locked.seconds);
  log(`contended: script ${luaRate}/s, FOR UPDATE ${lockedRate}/s`);

  await db.end();
  redis.disconnect();
  // The shared modules' own clients, so the bench exits once the twin is gone.
  (await import('../../shared/clients/redis')).redis.disconnect();
  await (await import('../../shared/clients/mysql')).db.end();
  const summary = (r: { load: LoadResult; statuses: Record<string, number> }) => ({ ...r.load, statuses: r.statuses });
  return {
    load: surge.load,
    baseline: { ...summary(baseline), rows: baselineFacts.rows, oversold: Math.max(0, baselineFacts.sold - baselineFacts.initial) },
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
      baseline_rows_match_accepted: { expected: baseline.orderIds.length, actual: baselineFacts.rows },
    },
  };
};
