/**
 * Abuse during a flash sale: the orders race, once alone and once while a sign-in flood of wrong
 * passwords comes from a few other source addresses (127.0.0.2–5, outside the bench twin's
 * load-test allowance of 127.0.0.1). Buyers' req/s, p99 and CPU per order with and without the
 * flood, in the same run; the flood's answers (429 once each target is locked out from its
 * source) and the machine's CPU per flood attempt once locked out, which is what no scrypt costs.
 */
import { Agent, request } from 'node:http';
import { randomBytes } from 'node:crypto';
import { createPool, type RowDataPacket } from 'mysql2/promise';
import type { Scenario } from '../bench';
import { adminCookie, adminPut, pointAtTwin, race, releaseSharedClients, signedInCrowd } from '../support/crowd';
import { machineCpuSeconds, round, startCpuMeter } from '../support/measure';

const BUYERS = Number(process.env.BENCH_BUYERS ?? 5_000);
const FLOOD_SOURCES = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5'];
const FLOOD_TARGETS = 5;
const FLOOD_CONCURRENCY = 16;
const FLOOD_ONLY_MS = 3_000;

interface Flood {
  attempts: number;
  statuses: Record<string, number>;
  stop(): Promise<void>;
}

/** Wrong passwords for the targets, as fast as FLOOD_CONCURRENCY connections allow, from the flood's sources. */
function startFlood(url: URL, targets: string[]): Flood {
  const flood = { attempts: 0, statuses: {} as Record<string, number> };
  let running = true;
  const agents = FLOOD_SOURCES.map((localAddress) => new Agent({ keepAlive: true, localAddress } as ConstructorParameters<typeof Agent>[0]));
  const attempt = (i: number) =>
    new Promise<void>((resolve) => {
      const body = JSON.stringify({ email: targets[i % targets.length], password: `guess-${randomBytes(6).toString('hex')}` });
      const req = request(
        { host: url.hostname, port: url.port, path: '/sessions', method: 'POST', agent: agents[i % agents.length], headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          res.resume();
          res.on('end', () => {
            flood.statuses[res.statusCode ?? 0] = (flood.statuses[res.statusCode ?? 0] ?? 0) + 1;
            resolve();
          });
        },
      );
      req.on('error', () => {
        flood.statuses.network = (flood.statuses.network ?? 0) + 1;
        resolve();
      });
      req.end(body);
    });
  const workers = Array.from({ length: FLOOD_CONCURRENCY }, async (_, w) => {
    for (let i = w; running; i += FLOOD_CONCURRENCY) {
      flood.attempts += 1;
      await attempt(i);
    }
  });
  return Object.assign(flood, {
    async stop() {
      running = false;
      await Promise.all(workers);
      for (const agent of agents) agent.destroy();
    },
  });
}

/** The twin's own processes (gateway, consumers, stores), without the bench's generators: the system's CPU per order. */
const twinCpu = (perOrder: Record<string, number>) => round(Object.entries(perOrder).reduce((sum, [name, ms]) => (name === 'machine' ? sum : sum + ms), 0), 4);

export const abuse: Scenario = async ({ twin, connections, log }) => {
  pointAtTwin(twin);
  const tag = randomBytes(3).toString('hex');
  const db = createPool({ uri: twin.databaseUrl, connectionLimit: 4 });
  const admin = await adminCookie(twin);
  log(`creating ${BUYERS} signed-in buyers and ${FLOOD_TARGETS} accounts to guess at`);
  const { cookies } = await signedInCrowd(twin, BUYERS);
  const targets = (await signedInCrowd(twin, FLOOD_TARGETS)).ids.map(String);
  const [targetRows] = await db.query<RowDataPacket[]>('SELECT email FROM users WHERE id IN (?)', [targets]);
  const targetEmails = targetRows.map((r) => String(r.email));

  async function sale(label: string) {
    const itemId = `abuse-${tag}-${label}`;
    await adminPut(twin, admin, `/items/${itemId}/stock`, { quantity: BUYERS, perUserLimit: 1 });
    const cpu = startCpuMeter(twin.pids);
    const result = await race(twin, { path: `/items/${itemId}/orders`, cookies, connections, body: '{"quantity":1}', idempotencyPrefix: `abuse-${tag}-${label}`, idField: 'orderId' }, `orders ${label}`, log);
    const cpuPerOrder = cpu.perRequest(result.ids.length || 1);
    const deadline = Date.now() + 120_000;
    let rows = 0;
    while (Date.now() < deadline) {
      const [[r]] = await db.query<RowDataPacket[]>("SELECT COUNT(*) AS n FROM orders WHERE item_id = ? AND status = 'confirmed'", [itemId]);
      rows = Number(r!.n);
      if (rows >= result.ids.length) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const [[item]] = await db.query<RowDataPacket[]>('SELECT sold, initial_stock FROM items WHERE id = ?', [itemId]);
    return { result, cpuPerOrder, rows, oversold: Math.max(0, Number(item!.sold) - Number(item!.initial_stock)) };
  }

  const calm = await sale('calm');
  const flood = startFlood(new URL(twin.url), targetEmails);
  const flooded = await sale('flooded');
  // The flood alone, once every target is locked out from every source: what a refused attempt costs.
  const attemptsBefore = flood.attempts;
  const machineBefore = machineCpuSeconds();
  await new Promise((resolve) => setTimeout(resolve, FLOOD_ONLY_MS));
  const cpuPerRefusedMs = ((machineCpuSeconds() - machineBefore) * 1000) / Math.max(1, flood.attempts - attemptsBefore);
  await flood.stop();
  log(`flood: ${flood.attempts} attempts, ${JSON.stringify(flood.statuses)}`);

  await db.end();
  await releaseSharedClients();
  const wrongPasswordsTried = flood.statuses['401'] ?? 0;
  return {
    load: flooded.result.load,
    extra: {
      buyers: BUYERS,
      calm: { rps: calm.result.load.rps, p99_ms: calm.result.load.p99_ms, cpu_ms_per_order: calm.cpuPerOrder.machine, twin_cpu_ms_per_order: twinCpu(calm.cpuPerOrder) },
      flooded: { rps: flooded.result.load.rps, p99_ms: flooded.result.load.p99_ms, cpu_ms_per_order: flooded.cpuPerOrder.machine, twin_cpu_ms_per_order: twinCpu(flooded.cpuPerOrder) },
      rps_ratio_flooded_to_calm: round(flooded.result.load.rps / calm.result.load.rps, 2),
      cpu_per_order_ratio_flooded_to_calm: round(flooded.cpuPerOrder.machine! / calm.cpuPerOrder.machine!, 2),
      flood: { sources: FLOOD_SOURCES.length, targets: FLOOD_TARGETS, attempts: flood.attempts, statuses: flood.statuses, cpu_ms_per_refused_attempt: round(cpuPerRefusedMs, 4) },
    },
    invariants: {
      final_rows: { expected: [BUYERS, BUYERS], actual: [calm.rows, flooded.rows] },
      oversold: { expected: [0, 0], actual: [calm.oversold, flooded.oversold] },
      flood_at_least_5000: { expected: true, actual: flood.attempts >= 5_000 },
      // Each (target, source) pair gets its wrong passwords until it is locked out: scrypt ran for those only.
      wrong_passwords_checked_at_most_lockouts: { expected: true, actual: wrongPasswordsTried <= FLOOD_TARGETS * FLOOD_SOURCES.length * 5 },
      flood_answers_only_401_or_429: { expected: [], actual: Object.keys(flood.statuses).filter((s) => s !== '401' && s !== '429') },
    },
  };
};
