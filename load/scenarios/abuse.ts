/**
 * Abuse during a flash sale: the orders race, once alone and once while a sign-in flood of wrong
 * passwords comes from a few other source addresses (127.0.0.2–5, outside the bench twin's
 * load-test allowance of 127.0.0.1). Buyers' req/s, p99 and CPU per order with and without the
 * flood, in the same run; the flood's answers (429 once each target is locked out from its
 * source) and the machine's CPU per flood attempt once locked out, which is what no scrypt costs.
 * Then a mail flood: one sender mails one reader over SMTP, each mail with a List-Id of its own,
 * while the reader's newsletter from another sender goes on: the reader's newsletters stay at the
 * cap, that newsletter's mail is all filed, and the flood is kept (filed or quarantined), not lost.
 */
import { Agent, request } from 'node:http';
import { randomBytes } from 'node:crypto';
import { createPool, type Pool, type RowDataPacket } from 'mysql2/promise';
import { createTransport } from 'nodemailer';
import { insertInboxTokens, insertUsers } from '../../infra/twin/seed';
import { gcra, LIMITS } from '../../shared/limits/limits';
import type { Scenario } from '../support/scenario';
import { adminCookie, adminPut, pointAtTwin, race, releaseSharedClients, signedInCrowd } from '../support/crowd';
import { machineCpuSeconds, startCpuMeter } from '../support/cpu';
import { round } from '../support/round';
import { until } from '../../shared/platform/wait';

const BUYERS = Number(process.env.BENCH_BUYERS ?? 5_000);
const FLOOD_SOURCES = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5'];
const FLOOD_TARGETS = 5;
const FLOOD_CONCURRENCY = 16;
const FLOOD_ONLY_MS = 3_000;
const FLOOD_MAILS = Number(process.env.BENCH_FLOOD_MAILS ?? 1_000);
/** Issues of the reader's own newsletter, sent among the flood's mails. */
const WANTED_MAILS = 20;
const MAIL_CONCURRENCY = 16;
const MAIL_SETTLED_WITHIN_MS = 120_000;

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
        {
          host: url.hostname,
          port: url.port,
          path: '/sessions',
          method: 'POST',
          agent: agents[i % agents.length],
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
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

/** Waits until every message has its outcomes recorded; the outcomes, `outcome` or `outcome:reason`. */
async function outcomesOf(db: Pool, messageIds: string[]): Promise<string[]> {
  let rows: RowDataPacket[] = [];
  await until(
    async () => {
      [rows] = await db.query<RowDataPacket[]>('SELECT outcome, reason FROM mail_outcomes WHERE ses_message_id IN (?)', [messageIds]);
      return rows.length >= messageIds.length;
    },
    MAIL_SETTLED_WITHIN_MS,
    'every outcome recorded',
    100,
    { atDeadline: 'give up' },
  );
  return rows.map((r) => (r.reason ? `${r.outcome}:${r.reason}` : String(r.outcome)));
}

const tally = (outcomes: string[]) => outcomes.reduce<Record<string, number>>((counts, o) => ({ ...counts, [o]: (counts[o] ?? 0) + 1 }), {});

/**
 * The mail flood: one sender, a fresh List-Id on every mail, to one reader who already has a
 * newsletter from another sender, whose issues arrive spread through the flood.
 */
async function mailFlood(twin: Parameters<Scenario>[0]['twin'], db: Pool, tag: string, log: (line: string) => void) {
  const [reader] = await insertUsers(twin.databaseUrl, [`flooded-${tag}@surge.test`], `flooded-${tag}-password`);
  const [token] = await insertInboxTokens(twin.databaseUrl, [reader!.id]);
  const smtp = createTransport({ url: twin.smtpUrl, ignoreTLS: true });
  const send = async (from: string, listId: string, subject: string) => {
    const info = await smtp.sendMail({ from, to: `${token}@${twin.inboundDomain}`, subject, text: 'This week.', list: { id: listId } });
    return /queued as ([a-z0-9]+)/.exec(info.response)![1]!;
  };
  const wanted = (n: number) => send('Weekly Bits <news@bits.example>', `weekly-${tag}.bits.example`, `Issue ${n}`);
  const flooding = (n: number) => send(`Deals <promo@flood-${tag}.example>`, `deal-${randomBytes(6).toString('hex')}.flood-${tag}.example`, `Deal ${n}`);

  // The reader's newsletter, theirs before the flood (one of the day's new ones).
  await outcomesOf(db, [await wanted(0)]);
  log(`mail flood: ${FLOOD_MAILS} mails from one sender, each a new List-Id, with ${WANTED_MAILS} of the reader's newsletter among them`);
  const every = Math.floor(FLOOD_MAILS / WANTED_MAILS);
  const sends = Array.from({ length: FLOOD_MAILS }, (_, i) => ({ wanted: i % every === 0, n: i }));
  const [floodIds, wantedIds]: [string[], string[]] = [[], []];
  const cpu = startCpuMeter(twin.pids);
  const started = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: MAIL_CONCURRENCY }, async () => {
      while (next < sends.length) {
        const mail = sends[next++]!;
        floodIds.push(await flooding(mail.n));
        if (mail.wanted) wantedIds.push(await wanted(1 + mail.n / every));
      }
    }),
  );
  const [flood, wantedOutcomes] = [await outcomesOf(db, floodIds), await outcomesOf(db, wantedIds)];
  const elapsedMs = Date.now() - started;
  const cpuPerMail = cpu.perRequest(floodIds.length + wantedIds.length);
  smtp.close();
  const [[shelf]] = await db.query<RowDataPacket[]>('SELECT COUNT(*) AS n FROM subscriptions WHERE user_id = ?', [reader!.id]);
  const floodTally = tally(flood);
  log(`mail flood: ${JSON.stringify(floodTally)}; the reader's newsletter: ${JSON.stringify(tally(wantedOutcomes))}`);
  // What the sender's rate lets through: its burst, and one more each interval the flood lasted.
  const [interval] = gcra(LIMITS.mailPerReaderFromSender);
  return {
    elapsedMs,
    cpuPerMail,
    floodTally,
    wantedTally: tally(wantedOutcomes),
    newsletters: Number(shelf!.n),
    floodRecorded: flood.length,
    floodKept: flood.filter((o) => o === 'filed' || o.startsWith('quarantined')).length,
    floodAdmitted: flood.filter((o) => o !== 'quarantined:rate-reader-sender').length,
    admittedAtMost: LIMITS.mailPerReaderFromSender.count + Math.ceil(elapsedMs / interval),
    wantedFiled: wantedOutcomes.filter((o) => o === 'filed').length,
    wantedSent: wantedIds.length,
  };
}

/** The twin's own processes (gateway, consumers, stores), without the bench's generators: the system's CPU per order. */
const twinCpu = (perOrder: Record<string, number>) =>
  round(
    Object.entries(perOrder).reduce((sum, [name, ms]) => (name === 'machine' ? sum : sum + ms), 0),
    4,
  );

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
    const result = await race(
      twin,
      { path: `/items/${itemId}/orders`, cookies, connections, body: '{"quantity":1}', idempotencyPrefix: `abuse-${tag}-${label}`, idField: 'orderId' },
      `orders ${label}`,
      log,
    );
    const cpuPerOrder = cpu.perRequest(result.ids.length || 1);
    let rows = 0;
    await until(
      async () => {
        const [[r]] = await db.query<RowDataPacket[]>("SELECT COUNT(*) AS n FROM orders WHERE item_id = ? AND status = 'confirmed'", [itemId]);
        rows = Number(r!.n);
        return rows >= result.ids.length;
      },
      120_000,
      'the orders confirmed',
      100,
      { atDeadline: 'give up' },
    );
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
  const mail = await mailFlood(twin, db, tag, log);

  await db.end();
  await releaseSharedClients();
  const wrongPasswordsTried = flood.statuses['401'] ?? 0;
  return {
    load: flooded.result.load,
    extra: {
      buyers: BUYERS,
      calm: {
        rps: calm.result.load.rps,
        p99_ms: calm.result.load.p99_ms,
        cpu_ms_per_order: calm.cpuPerOrder.machine,
        twin_cpu_ms_per_order: twinCpu(calm.cpuPerOrder),
      },
      flooded: {
        rps: flooded.result.load.rps,
        p99_ms: flooded.result.load.p99_ms,
        cpu_ms_per_order: flooded.cpuPerOrder.machine,
        twin_cpu_ms_per_order: twinCpu(flooded.cpuPerOrder),
      },
      rps_ratio_flooded_to_calm: round(flooded.result.load.rps / calm.result.load.rps, 2),
      cpu_per_order_ratio_flooded_to_calm: round(flooded.cpuPerOrder.machine! / calm.cpuPerOrder.machine!, 2),
      flood: {
        sources: FLOOD_SOURCES.length,
        targets: FLOOD_TARGETS,
        attempts: flood.attempts,
        statuses: flood.statuses,
        cpu_ms_per_refused_attempt: round(cpuPerRefusedMs, 4),
      },
      mail_flood: {
        mails: FLOOD_MAILS,
        seconds: round(mail.elapsedMs / 1000, 1),
        outcomes: mail.floodTally,
        reader_newsletter_outcomes: mail.wantedTally,
        reader_newsletters: mail.newsletters,
        twin_cpu_ms_per_mail: twinCpu(mail.cpuPerMail),
        cpu_ms_per_mail: mail.cpuPerMail.machine,
      },
    },
    invariants: {
      final_rows: { expected: [BUYERS, BUYERS], actual: [calm.rows, flooded.rows] },
      oversold: { expected: [0, 0], actual: [calm.oversold, flooded.oversold] },
      flood_at_least_5000: { expected: true, actual: flood.attempts >= 5_000 },
      // Each (target, source) pair gets its wrong passwords until it is locked out: scrypt ran for those only.
      wrong_passwords_checked_at_most_lockouts: { expected: true, actual: wrongPasswordsTried <= FLOOD_TARGETS * FLOOD_SOURCES.length * 5 },
      flood_answers_only_401_or_429: { expected: [], actual: Object.keys(flood.statuses).filter((s) => s !== '401' && s !== '429') },
      // The reader's own newsletter, then as many of the flood's as the cap of new ones leaves room for.
      mail_flood_reader_newsletters_at_cap: { expected: LIMITS.newNewslettersPerReader.count, actual: mail.newsletters },
      mail_flood_reader_newsletter_all_filed: { expected: WANTED_MAILS, actual: mail.wantedFiled },
      mail_flood_every_mail_kept: { expected: [FLOOD_MAILS, FLOOD_MAILS], actual: [mail.floodRecorded, mail.floodKept] },
      mail_flood_admitted_within_sender_rate: { expected: true, actual: mail.floodAdmitted <= mail.admittedAtMost },
    },
  };
};
