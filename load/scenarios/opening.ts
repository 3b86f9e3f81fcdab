/**
 * A sale's opening: the functions run as their bundles in Lambda's instance model, each with the one
 * instance the twin warmed at its start, when a crowd arrives at once — every connection ordering,
 * reading GET /me and polling its place in another item's waiting room, in turn. Instances are
 * started as the load asks (cold starts, each held to Lambda's init limit, taking turns for the
 * cores). Measured: the time from the first request to the first 202, p50/p99 over the first
 * OPENING_S seconds against the steady state right after, the instances started, their init CPU per
 * instance and per function, and each bundle's bytes. Then every order answered 202 must be stored.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Options } from 'autocannon';
import { createConnection, type RowDataPacket } from 'mysql2/promise';
import { MAX_ORDER_QUANTITY } from '../../shared/sale/orders/model';
import { joinQueue } from '../../shared/sale/rooms/rooms';
import { until } from '../../shared/platform/wait';
import { adminCookie, adminPut, orderRequest, pointAtTwin, releaseSharedClients, signedInCrowd, timed } from '../support/crowd';
import { snapshotInvocations, type Snapshot } from '../support/invocations';
import { drive, type LoadResult } from '../support/measure';
import { round } from '../support/round';
import type { Scenario } from '../support/scenario';
import { BENCH_BUNDLES_DIR } from '../support/twin';

const BUYERS = 2_000;
const OPENING_S = 10;
const STEADY_S = 10;
/** The functions the crowd's requests reach, by the path each serves. */
const REACHED = ['create-order', 'get-me', 'get-queue-status'] as const;
const HOUR_MS = 3_600_000;

/** Each function's inits between two readings of the twin's counts (infra/twin/lambda/invocations.ts). */
function initsBetween(before: Snapshot, after: Snapshot) {
  return Object.fromEntries(
    REACHED.map((id) => {
      const [b, a] = [before.gateway.functions[id]?.inits, after.gateway.functions[id]?.inits];
      const count = (a?.count ?? 0) - (b?.count ?? 0);
      const cpu = (a?.cpu_ms ?? 0) - (b?.cpu_ms ?? 0);
      const ms = (a?.ms ?? 0) - (b?.ms ?? 0);
      const imported = (a?.import_cpu_ms ?? 0) - (b?.import_cpu_ms ?? 0);
      const per = (total: number, digits = 1) => (count ? round(total / count, digits) : null);
      return [
        id,
        {
          instances_started: count,
          init_cpu_ms_total: round(cpu, 1),
          init_cpu_ms_per_instance: per(cpu),
          import_cpu_ms_per_instance: per(imported),
          init_ms_per_instance: per(ms),
        },
      ];
    }),
  );
}

const bundleBytes = (id: string): number | null => {
  try {
    return statSync(join(BENCH_BUNDLES_DIR, id, 'index.mjs')).size;
  } catch {
    return null;
  }
};

export const opening: Scenario = async ({ twin, runtime, connections, log }) => {
  if (!runtime.lambdaInstances)
    throw new Error("the opening is measured in Lambda's instance model: run it with --lambda-instances N (bench.ts gives it one by default)");
  pointAtTwin(twin);
  const tag = randomBytes(3).toString('hex');
  const admin = await adminCookie(twin);
  log(`${BUYERS} signed-in buyers, a sale and a room that waits`);
  const { ids, cookies } = await signedInCrowd(twin, BUYERS);
  const itemId = `opening-${tag}`;
  const roomItem = `opening-room-${tag}`;
  await adminPut(twin, admin, `/items/${itemId}/stock`, { quantity: 10_000_000, perUserLimit: MAX_ORDER_QUANTITY });
  await adminPut(twin, admin, `/items/${roomItem}/stock`, { quantity: 1_000, perUserLimit: 1 });
  await adminPut(twin, admin, `/items/${roomItem}/waiting-room`, {
    opensAt: new Date(Date.now() + HOUR_MS).toISOString(),
    admitPerSecond: 10,
    passSeconds: 60,
    graceSeconds: 30,
  });
  // Joined from here, not through the API: the join function's instances are not the opening's.
  for (const userId of ids) await joinQueue(roomItem, userId);

  const orders = { next: 0 };
  const crowd = (duration: number): Options => ({
    url: twin.url,
    connections,
    duration,
    requests: [
      orderRequest(itemId, cookies, `opening-${tag}`, orders),
      { method: 'GET', path: '/me', setupRequest: (req) => ({ ...req, headers: { cookie: cookies[orders.next % cookies.length]! } }) },
      { method: 'GET', path: `/items/${roomItem}/queue/me`, setupRequest: (req) => ({ ...req, headers: { cookie: cookies[orders.next % cookies.length]! } }) },
    ],
  });

  const statuses = { opening: {} as Record<number, number>, steady: {} as Record<number, number> };
  let accepted = 0;
  let firstAcceptedMs: number | undefined;
  const counting = (phase: keyof typeof statuses, started: number) => (status: number) => {
    statuses[phase][status] = (statuses[phase][status] ?? 0) + 1;
    if (status !== 202) return;
    accepted += 1;
    firstAcceptedMs ??= performance.now() - started;
  };

  const before = await snapshotInvocations(twin);
  const openedAt = performance.now();
  const openingLoad = await drive(crowd(OPENING_S), `the opening: ${connections} connections at once`, log, counting('opening', openedAt));
  const afterOpening = await snapshotInvocations(twin);
  const steadyLoad = await drive(crowd(STEADY_S), 'the steady state right after', log, counting('steady', performance.now()));
  const afterSteady = await snapshotInvocations(twin);

  const db = await createConnection({ uri: twin.databaseUrl });
  const stored = async () =>
    Number((await db.query<RowDataPacket[]>("SELECT COUNT(*) AS n FROM orders WHERE item_id = ? AND status = 'confirmed'", [itemId]))[0][0]!.n);
  const sent = orders.next;
  const drained = await timed(() => until(async () => (await stored()) >= accepted, 120_000, 'the orders stored', 100, { atDeadline: 'give up' }));
  const rows = await stored();
  await db.end();
  await releaseSharedClients();

  const summary = (load: LoadResult, phase: keyof typeof statuses) => ({ rps: load.rps, p50_ms: load.p50_ms, p99_ms: load.p99_ms, statuses: statuses[phase] });
  const fivexx = (phase: keyof typeof statuses) =>
    Object.entries(statuses[phase]).reduce((sum, [status, count]) => sum + (Number(status) >= 500 ? count : 0), 0);
  // The instance the twin warmed at its start, before any traffic: every function's first init, alone on the machine.
  const atStart = { gateway: { ...before.gateway, functions: {} } } as Snapshot;
  const inits = { warmed: initsBetween(atStart, before), opening: initsBetween(before, afterOpening), steady: initsBetween(afterOpening, afterSteady) };
  return {
    load: openingLoad,
    extra: {
      time_to_first_202_ms: firstAcceptedMs === undefined ? null : round(firstAcceptedMs, 1),
      opening: summary(openingLoad, 'opening'),
      steady: summary(steadyLoad, 'steady'),
      p50_opening_to_steady: round(openingLoad.p50_ms / Math.max(1, steadyLoad.p50_ms), 2),
      p99_opening_to_steady: round(openingLoad.p99_ms / Math.max(1, steadyLoad.p99_ms), 2),
      instances: Object.fromEntries(
        REACHED.map((id) => [
          id,
          {
            ...inits.opening[id],
            started_in_steady_state: inits.steady[id]!.instances_started,
            warmed_at_start_init_cpu_ms: inits.warmed[id]!.init_cpu_ms_per_instance,
            warmed_at_start_import_cpu_ms: inits.warmed[id]!.import_cpu_ms_per_instance,
            warmed_at_start_init_ms: inits.warmed[id]!.init_ms_per_instance,
            bundle_bytes: bundleBytes(id),
          },
        ]),
      ),
      init_cpu_ms_all_functions: round(
        Object.values(inits.opening).reduce((sum, f) => sum + f.init_cpu_ms_total, 0),
        1,
      ),
      buyers: BUYERS,
      drain_s: round(drained.seconds, 2),
    },
    invariants: {
      // An order in flight when a load ended is stored without its 202 having been counted: every
      // 202 is a row, and no row is of an order never sent.
      accepted_orders_stored: { expected: true, actual: rows >= accepted && rows <= sent },
      opening_5xx: { expected: 0, actual: fivexx('opening') },
      steady_5xx: { expected: 0, actual: fivexx('steady') },
    },
  };
};
