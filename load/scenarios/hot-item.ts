/**
 * One hot item beyond one shard: the contended rate of one item's reservations with its stock
 * whole (N = 1, one slot) and split into N = 3 buckets (one slot each; one per master on a
 * 3-master cluster), in the same run, A B B A. Each run opens a fresh item through
 * `PUT /items/{id}/stock`, then CLIENTS child processes (so the client is not the bound) reserve
 * one unit per buyer with IN_FLIGHT each in flight, for 10 % more buyers than units, so every
 * run sells out and its last units are taken from other buckets. Then the outbox is relayed to
 * the twin's writer, whose confirmed rows per second for the item are measured.
 *
 * Measured per run: reservations/s, Redis CPU per reservation on each shard (INFO cpu deltas of
 * each master) and each shard's share of it, the capacity per item that implies (the busiest
 * shard's core saturated), false_sold_out (SOLD_OUT answered before a buyer who then got a unit
 * even asked), and MySQL's sold. A reservation whose answer timed out (an overloaded machine) is
 * still stored, through the relay: sold = stock holds whatever the clients were told. Run it on the cluster: SURGE_REDIS_CLUSTER=true (or a twin
 * started with `npm start -- --redis-cluster`); on a single node every bucket shares its core.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import slotOf from 'cluster-key-slot';
import { createPool, type RowDataPacket } from 'mysql2/promise';
import type { Scenario } from '../support/scenario';
import { adminCookie, adminPut, pointAtTwin, releaseSharedClients, timed } from '../support/crowd';
import { meanLoad, type LoadResult } from '../support/measure';
import { round } from '../support/round';
import { redisCpuSeconds, shardsOf, type Shard } from '../support/redis-shards';
import { orders } from '../../shared/sale/orders/kind';
import { bucketTags } from '../../shared/reservations/buckets';
import { reconcileOwner } from '../../shared/reservations/reconcile';
import { until } from '../../shared/platform/wait';
import { falseSoldOut, type Answer } from '../support/false-sold-out';

const STOCK = Number(process.env.BENCH_HOT_STOCK ?? 20_000);
const BUYERS = Math.round(STOCK * 1.1);
const CLIENTS = Number(process.env.BENCH_HOT_CLIENTS ?? 3);
const IN_FLIGHT = Number(process.env.BENCH_HOT_IN_FLIGHT ?? 50);
const SPLIT = 3;

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

interface ClientReport {
  outcomes: Record<string, number>;
  lastReservedAskedAt: number;
  soldOutAnsweredAt: number[];
  latencies: number[];
}

function startClient(itemId: string, first: number, count: number): { child: ChildProcess; ready: Promise<void>; report: Promise<ClientReport> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'load/support/hot-item-client.ts', itemId, String(first), String(count), String(IN_FLIGHT)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const next = () =>
    new Promise<string>((resolve, reject) => {
      lines.once('line', resolve);
      child.once('exit', (code) => reject(new Error(`hot-item client exited with ${code}`)));
    });
  const ready = next().then(() => undefined);
  const report = ready.then(next).then((line) => JSON.parse(line) as ClientReport);
  return { child, ready, report };
}

export const hotItem: Scenario = async ({ twin, log }) => {
  const { shards, cluster, close } = await shardsOf(twin.redisUrl);
  pointAtTwin(twin, cluster ? { REDIS_CLUSTER: 'true' } : {});
  const db = createPool({ uri: twin.databaseUrl, connectionLimit: 2 });
  const admin = await adminCookie(twin);
  const tag = randomBytes(3).toString('hex');
  const shardOf = (tagName: string) => shards.find((s) => s.slots.some(([low, high]) => slotOf(tagName) >= low && slotOf(tagName) <= high))!.name;
  log(`Redis: ${cluster ? `a cluster of ${shards.length} masters` : 'a single node'}; ${CLIENTS} client processes × ${IN_FLIGHT} in flight`);

  const sold = async (itemId: string) => {
    const [[item], [rows]] = await Promise.all([
      db.query<RowDataPacket[]>('SELECT initial_stock, sold FROM items WHERE id = ?', [itemId]),
      db.query<RowDataPacket[]>("SELECT COUNT(*) AS n FROM orders WHERE item_id = ? AND status = 'confirmed'", [itemId]),
    ]);
    return { initial: Number(item[0]!.initial_stock), sold: Number(item[0]!.sold), confirmedRows: Number(rows[0]!.n) };
  };

  async function run(buckets: number, label: string) {
    const itemId = `hot-${tag}-${label}`;
    await adminPut(twin, admin, `/items/${itemId}/stock`, { quantity: STOCK, perUserLimit: 1, buckets });
    const share = Math.ceil(BUYERS / CLIENTS);
    const clients = Array.from({ length: CLIENTS }, (_, c) => startClient(itemId, 1 + c * share, Math.min(share, BUYERS - c * share)));
    await Promise.all(clients.map((c) => c.ready));
    log(`${label}: N = ${buckets}, ${BUYERS} buyers for ${STOCK} units`);
    const cpuBefore = await Promise.all(shards.map((shard) => redisCpuSeconds([shard])));
    const race = await timed(async () => {
      for (const c of clients) c.child.stdin!.end('go\n');
      return Promise.all(clients.map((c) => c.report));
    });
    const cpuAfter = await Promise.all(shards.map((shard) => redisCpuSeconds([shard])));
    const reports = race.value;
    const outcomes: Record<string, number> = {};
    for (const r of reports) for (const [k, n] of Object.entries(r.outcomes)) outcomes[k] = (outcomes[k] ?? 0) + n;
    const reserved = outcomes.reserved ?? 0;
    const answers: Answer[] = [
      { startedAt: Math.max(...reports.map((r) => r.lastReservedAskedAt)), answeredAt: 0, outcome: 'reserved' },
      ...reports.flatMap((r) => r.soldOutAnsweredAt.map((answeredAt) => ({ startedAt: 0, answeredAt, outcome: 'SOLD_OUT' }))),
    ];
    const latencies = reports.flatMap((r) => r.latencies).sort((a, b) => a - b);
    const cpuMs = shards.map((s, i) => ((cpuAfter[i]! - cpuBefore[i]!) * 1000) / (reserved || 1));
    const totalCpuMs = cpuMs.reduce((a, b) => a + b, 0);
    const busiest = Math.max(...cpuMs);

    // The writer: every reservation relayed from the outbox to the queue at once, then the rows counted as they land.
    const drain = await timed(async () => {
      await reconcileOwner(orders, itemId, { relayOlderThanMs: 0, repair: false });
      await until(async () => (await sold(itemId)).confirmedRows >= reserved, 180_000, 'the reservations stored', 100, { atDeadline: 'give up' });
    });
    const facts = await sold(itemId);
    const load: LoadResult = {
      requests: BUYERS,
      ok: reserved,
      errors: BUYERS - reserved - (outcomes.SOLD_OUT ?? 0),
      rps: round(reserved / race.seconds),
      p50_ms: round(percentile(latencies, 50)),
      p99_ms: round(percentile(latencies, 99)),
    };
    log(
      `${label}: ${load.rps} reservations/s; Redis CPU per reservation by shard ${cpuMs.map((c) => round(c, 4)).join(' / ')} ms; writer ${round(facts.confirmedRows / drain.seconds)} rows/s`,
    );
    return {
      buckets,
      load,
      outcomes,
      falseSoldOut: falseSoldOut(answers),
      facts,
      bucketShards: bucketTags(`item:${itemId}`, buckets).map(shardOf),
      shards: shards.map((s, i) => ({ shard: s.name, redis_cpu_ms_per_reservation: round(cpuMs[i]!, 4), share: round(cpuMs[i]! / (totalCpuMs || 1), 3) })),
      capacityPerItem: round(1000 / (busiest || 1)),
      totalCpuMs,
      writerRowsPerSecond: round(facts.confirmedRows / drain.seconds),
    };
  }

  // A B B A, so neither layout gains from going second on a warmed-up twin.
  const runs = [await run(1, 'n1-a'), await run(SPLIT, 'n3-a'), await run(SPLIT, 'n3-b'), await run(1, 'n1-b')];
  const whole = runs.filter((r) => r.buckets === 1);
  const split = runs.filter((r) => r.buckets === SPLIT);
  const wholeLoad = meanLoad(whole.map((r) => r.load));
  const splitLoad = meanLoad(split.map((r) => r.load));
  const meanOf = (xs: number[]) => round(xs.reduce((a, b) => a + b, 0) / xs.length, 4);
  const shardShares = shards.map((s, i) => meanOf(split.map((r) => r.shards[i]!.share)));

  await db.end();
  close();
  await releaseSharedClients();
  return {
    load: splitLoad,
    baseline: { buckets: 1, ...wholeLoad },
    extra: {
      redis: cluster ? `cluster of ${shards.length} masters` : 'single node',
      stock: STOCK,
      buyers: BUYERS,
      client_processes: CLIENTS,
      in_flight_per_client: IN_FLIGHT,
      ratio_n3_to_n1: round(splitLoad.rps / wholeLoad.rps, 2),
      runs: runs.map((r) => ({
        buckets: r.buckets,
        rps: r.load.rps,
        p99_ms: r.load.p99_ms,
        outcomes: r.outcomes,
        bucket_shards: r.bucketShards,
        writer_rows_per_s: r.writerRowsPerSecond,
      })),
      redis_cpu_per_reservation: {
        n1: whole.map((r) => r.shards),
        n3: split.map((r) => r.shards),
        n3_mean_share_by_shard: shardShares,
        // Each of N shards within 20 % of a 1/N share: the load spread evenly.
        n3_even_within_20pct: cluster && shards.length === SPLIT ? shardShares.every((s) => Math.abs(s * SPLIT - 1) <= 0.2) : 'n/a on a single node',
      },
      capacity_per_item_per_s: {
        // The busiest shard's core saturated: what one item can take with its stock whole, and split.
        n1: meanOf(whole.map((r) => r.capacityPerItem)),
        n3: meanOf(split.map((r) => r.capacityPerItem)),
        // With buckets spread evenly over shards, each shard adds one core's worth at the measured total CPU per reservation.
        each_shard_adds: meanOf(split.map((r) => 1000 / (r.totalCpuMs || 1))),
      },
      writer_rows_per_s: { n1: meanOf(whole.map((r) => r.writerRowsPerSecond)), n3: meanOf(split.map((r) => r.writerRowsPerSecond)) },
    },
    invariants: {
      sold_equals_stock: { expected: runs.map(() => STOCK), actual: runs.map((r) => r.facts.sold) },
      confirmed_rows: { expected: runs.map(() => STOCK), actual: runs.map((r) => r.facts.confirmedRows) },
      false_sold_out: { expected: runs.map(() => 0), actual: runs.map((r) => r.falseSoldOut) },
      oversold: { expected: runs.map(() => 0), actual: runs.map((r) => Math.max(0, r.facts.sold - r.facts.initial)) },
      only_sold_out_refused: { expected: runs.map(() => BUYERS - STOCK), actual: runs.map((r) => r.outcomes.SOLD_OUT ?? 0) },
    },
  };
};
