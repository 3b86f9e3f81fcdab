/**
 * Inbound mail: MAILS readers receive the first issue of a new newsletter at the same moment, each
 * as its own mail sent concurrently over SMTP. Measured end to end, from the SMTP send to the issue
 * being visible in MySQL, with the newsletter-table statements counted in MariaDB's general log.
 * The same runs through the cache-only baseline (no lock) show what the lock saves; the two are
 * interleaved (locked, cache-only, cache-only, locked) and averaged.
 */
import { randomBytes } from 'node:crypto';
import { createConnection, type RowDataPacket } from 'mysql2/promise';
import { createTransport } from 'nodemailer';
import { statementsDuring } from '../../infra/twin/faults/query-log';
import { insertInboxTokens, insertUsers } from '../../infra/twin/seed';
import { identify } from '../../shared/mail/identity';
import { until } from '../../shared/platform/wait';
import { baselineMailDomain } from '../baselines/mail-domain';
import type { Scenario } from '../support/scenario';
import { startCpuMeter } from '../support/cpu';
import { meanLoad, type LoadResult } from '../support/measure';
import { NEWSLETTER_ADDRESS, newsletterIssue } from '../support/newsletter-mail';
import { round } from '../support/round';

const MAILS = Number(process.env.BENCH_MAILS ?? 1_000);
/**
 * A crowd of the measured shape sent through each route first, to a newsletter of its own, so that
 * neither route's runs pay for warming up: with 100 mails each, one bench's four runs rose in the
 * order they ran (69, 80, 95 and 113 mails/s), the first still compiling.
 */
const WARM_UP_MAILS = MAILS;
const VISIBLE_WITHIN_MS = 120_000;

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

interface RunResult {
  load: LoadResult;
  smtp_accept_p99_ms: number;
  newsletter_queries: { lookups: number; inserts: number };
  issues_filed: number;
  cpu_ms_per_mail: Record<string, number>;
}

/** Figures averaged over runs; query counts are summed per run, so reported as the mean too. */
function mean(runs: RunResult[]): RunResult {
  const avg = (pick: (r: RunResult) => number, digits = 2) => round(runs.reduce((sum, r) => sum + pick(r), 0) / runs.length, digits);
  const keys = Object.keys(runs[0]!.cpu_ms_per_mail);
  return {
    load: meanLoad(runs.map((r) => r.load)),
    smtp_accept_p99_ms: avg((r) => r.smtp_accept_p99_ms, 0),
    newsletter_queries: { lookups: avg((r) => r.newsletter_queries.lookups, 1), inserts: avg((r) => r.newsletter_queries.inserts, 1) },
    issues_filed: avg((r) => r.issues_filed, 0),
    cpu_ms_per_mail: Object.fromEntries(keys.map((k) => [k, avg((r) => r.cpu_ms_per_mail[k] ?? 0, 3)])),
  };
}

export const mail: Scenario = async ({ twin, log }) => {
  const smtpUrl = twin.smtpUrl;
  const db = await createConnection({ uri: twin.databaseUrl });
  // The bench's own statements stay out of the log it counts.
  await db.query('SET SESSION sql_log_off = ON');

  log(`creating ${MAILS} readers with inbound addresses`);
  const tag = randomBytes(3).toString('hex');
  const users = await insertUsers(
    twin.databaseUrl,
    Array.from({ length: MAILS }, (_, i) => `reader-${tag}-${i}@surge.test`),
    `reader-${tag}`,
  );
  const tokens = await insertInboxTokens(
    twin.databaseUrl,
    users.map((u) => u.id),
  );

  async function run(domain: string, label: string, readers = tokens, design?: string): Promise<RunResult> {
    const listId = `${label}-${tag}.bench.example`;
    const { key } = identify({ listId, listName: undefined, from: { name: '', address: NEWSLETTER_ADDRESS } }, { authenticated: true });
    const smtp = createTransport({ url: smtpUrl, ignoreTLS: true });
    const sentAt = new Map<string, number>();
    const acceptMs: number[] = [];
    let refused = 0;

    const cpu = startCpuMeter(twin.pids, design);
    const filed = new Map<string, number>();
    let started = 0;
    let cpuPerMail: Record<string, number> = {};
    // The newsletter statements of this run, counted by the database while the run lasts.
    const statements = await statementsDuring(
      twin.databaseUrl,
      async () => {
        log(`${label}: sending ${MAILS} mails of a new newsletter at once over SMTP`);
        started = Date.now();
        await Promise.all(
          readers.map(async (token, i) => {
            const start = Date.now();
            try {
              const info = await smtp.sendMail(newsletterIssue(i, `${token}@${domain}`, listId, `Bench issue ${tag}`));
              const messageId = /queued as ([a-z0-9]+)/.exec(info.response)?.[1];
              if (messageId) sentAt.set(messageId, start);
              acceptMs.push(Date.now() - start);
            } catch {
              refused++;
            }
          }),
        );
        log(`${label}: ${sentAt.size} accepted, ${refused} refused; waiting for the issues`);

        const allFiled = () => filed.size >= sentAt.size;
        await until(
          async () => {
            if (allFiled()) return true;
            const [rows] = await db.query<RowDataPacket[]>(
              'SELECT i.ses_message_id, UNIX_TIMESTAMP(i.filed_at) * 1000 AS filed FROM issues i JOIN newsletters n ON n.id = i.newsletter_id WHERE n.identity_key = ?',
              [key],
            );
            for (const row of rows) filed.set(row.ses_message_id as string, Number(row.filed));
            return allFiled();
          },
          VISIBLE_WITHIN_MS,
          'every issue filed',
          25,
          { atDeadline: 'give up' },
        );
        cpuPerMail = cpu.perRequest(readers.length);
      },
      'newsletters',
      key,
    );
    const queries = {
      lookups: statements.filter((sql) => /^\s*SELECT/i.test(sql)).length,
      inserts: statements.filter((sql) => /^\s*INSERT/i.test(sql)).length,
    };

    const latencies = [...filed].map(([id, at]) => at - (sentAt.get(id) ?? at)).sort((a, b) => a - b);
    const lastVisible = Math.max(started, ...filed.values());
    const seconds = (lastVisible - started) / 1000;
    const result: RunResult = {
      load: {
        requests: readers.length,
        ok: filed.size,
        errors: readers.length - filed.size,
        rps: round(filed.size / seconds),
        p50_ms: percentile(latencies, 50),
        p99_ms: percentile(latencies, 99),
      },
      smtp_accept_p99_ms: percentile(
        acceptMs.sort((a, b) => a - b),
        99,
      ),
      newsletter_queries: queries,
      issues_filed: filed.size,
      cpu_ms_per_mail: cpuPerMail,
    };
    log(`${label}: ${result.load.rps} mails/s end to end, p99 ${result.load.p99_ms} ms, newsletter queries ${JSON.stringify(queries)}`);
    smtp.close();
    return result;
  }

  try {
    await run(twin.inboundDomain, 'warm-up-locked', tokens.slice(0, WARM_UP_MAILS));
    await run(baselineMailDomain(twin.inboundDomain), 'warm-up-cache-only', tokens.slice(0, WARM_UP_MAILS));
    // A B B A: whichever runs first on a fresh heap pays more, so each goes first once.
    const lockedRuns = [await run(twin.inboundDomain, 'locked-1', tokens, 'surge')];
    const cacheOnlyRuns = [await run(baselineMailDomain(twin.inboundDomain), 'cache-only-1', tokens, 'cache_only')];
    cacheOnlyRuns.push(await run(baselineMailDomain(twin.inboundDomain), 'cache-only-2', tokens, 'cache_only'));
    lockedRuns.push(await run(twin.inboundDomain, 'locked-2', tokens, 'surge'));
    const locked = mean(lockedRuns);
    const cacheOnly = mean(cacheOnlyRuns);
    return {
      load: locked.load,
      designs: { surge: { label: 'Surge (locked fill)', load: locked.load }, cache_only: { label: 'cache only (no lock)', load: cacheOnly.load } },
      baseline: {
        name: 'cache-only (no lock)',
        ...cacheOnly.load,
        smtp_accept_p99_ms: cacheOnly.smtp_accept_p99_ms,
        newsletter_queries: cacheOnly.newsletter_queries,
        cpu_ms_per_mail: cacheOnly.cpu_ms_per_mail,
      },
      extra: {
        unit: 'mails (SMTP send → issue visible in MySQL), mean of two runs each',
        mails_per_s: locked.load.rps,
        smtp_accept_p99_ms: locked.smtp_accept_p99_ms,
        newsletter_queries: locked.newsletter_queries,
        cpu_ms_per_mail: locked.cpu_ms_per_mail,
        ratio_to_baseline: round(locked.load.rps / cacheOnly.load.rps, 2),
        runs: { locked: lockedRuns.map((r) => r.load.rps), cache_only: cacheOnlyRuns.map((r) => r.load.rps) },
      },
      invariants: {
        // Per run: every stampede of a new newsletter costs one lookup and one insert.
        newsletter_lookups: { expected: [1, 1], actual: lockedRuns.map((r) => r.newsletter_queries.lookups) },
        newsletter_inserts: { expected: [1, 1], actual: lockedRuns.map((r) => r.newsletter_queries.inserts) },
        issues_filed: { expected: [MAILS, MAILS], actual: lockedRuns.map((r) => r.issues_filed) },
        baseline_issues_filed: { expected: [MAILS, MAILS], actual: cacheOnlyRuns.map((r) => r.issues_filed) },
      },
    };
  } finally {
    await db.end();
  }
};
