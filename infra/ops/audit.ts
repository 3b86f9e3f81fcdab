/**
 * `npm run audit -- <target> <owner> <accepted ids file> [--deal] [--wait-s 60] [--admin-secret-file F | --admin-email E]`
 *
 * After a load test (`npm run artillery -- reference`), holds the sale of item <owner> (a deal
 * with --deal) against the ids the run was accepted for (one per line), through the target's
 * admin audit endpoint: waits, at most --wait-s, for the writer to drain (nothing pending), then
 * prints final_stock, accepted, rows, duplicates, oversold and lost, one JSON line last, and exits
 * 1 when one is off. The admin is the twin's demo admin unless told otherwise (the password in
 * SURGE_ADMIN_PASSWORD, never on the command line, or the first admin's secret file).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { demoAccounts } from '../twin/seed';
import { MAX_AUDITED_IDS } from '../../shared/reservations/audit';
import { expectData, signedIn } from '../client/client';
import { until } from '../../shared/platform/wait';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    deal: { type: 'boolean', default: false },
    'wait-s': { type: 'string', default: '60' },
    'admin-email': { type: 'string' },
    'admin-secret-file': { type: 'string' },
  },
});
const [rawTarget, owner, idsFile] = positionals;
if (!rawTarget || !/^https?:\/\//.test(rawTarget) || !owner || !idsFile) {
  process.stderr.write(
    'usage: npm run audit -- <target URL> <item or deal id> <accepted ids file> [--deal] [--wait-s 60] [--admin-secret-file F | --admin-email E]\n',
  );
  process.exit(2);
}
const target = rawTarget.replace(/\/$/, '');
const demoAdmin = demoAccounts.find((a) => a.role === 'admin')!;
const admin: { email: string; password: string } = values['admin-secret-file']
  ? JSON.parse(readFileSync(values['admin-secret-file'], 'utf8'))
  : { email: values['admin-email'] ?? demoAdmin.email, password: process.env.SURGE_ADMIN_PASSWORD ?? demoAdmin.password };
const accepted = [
  ...new Set(
    readFileSync(idsFile, 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean),
  ),
];

// An audit of many ids reads many rows: it may take longer than a call's usual 15 s.
const { client: asAdmin } = await signedIn(target, admin, { timeoutMs: 30_000 });

async function audit(ids: string[]) {
  const answer = values.deal
    ? await asAdmin.POST('/admin/audit/deals/{dealId}', { params: { path: { dealId: owner! } }, body: { accepted: ids } })
    : await asAdmin.POST('/admin/audit/items/{itemId}', { params: { path: { itemId: owner! } }, body: { accepted: ids } });
  return expectData(answer, 200);
}

// The writer drains: wait until nothing is pending, or the bound (then drained is off).
let whole!: Awaited<ReturnType<typeof audit>>;
await until(async () => (whole = await audit([])).pending <= 0, Number(values['wait-s']) * 1000, 'the writer drained', 1000, { atDeadline: 'give up' });
let lost = 0;
let rejected = 0;
const lostIds: string[] = [];
for (let i = 0; i < accepted.length; i += MAX_AUDITED_IDS) {
  const part = await audit(accepted.slice(i, i + MAX_AUDITED_IDS));
  lost += part.lost;
  rejected += part.rejected;
  lostIds.push(...part.lost_ids);
}

const figures = {
  final_stock: whole.final_stock,
  accepted: accepted.length,
  rows: whole.rows,
  duplicates: whole.duplicates,
  oversold: whole.oversold,
  lost,
};
const invariants = {
  drained: whole.pending === 0,
  // capacity = remaining + confirmed + pending, as reconciliation holds it; pending is drained's.
  stock_conserved: whole.drift === 0,
  every_row_accepted: whole.rows === accepted.length,
  no_duplicates: whole.duplicates === 0,
  not_oversold: whole.oversold === 0,
  none_lost: lost === 0,
  none_rejected: rejected === 0,
};
for (const [name, value] of Object.entries(figures)) process.stdout.write(`${name.padEnd(12)} ${value}\n`);
const off = Object.entries(invariants)
  .filter(([, held]) => !held)
  .map(([name]) => name);
process.stdout.write(off.length ? `OFF: ${off.join(', ')}\n` : 'every invariant held\n');
process.stdout.write(
  `${JSON.stringify({ owner, kind: values.deal ? 'deal' : 'item', ...figures, capacity: whole.capacity, confirmed: whole.confirmed, pending: whole.pending, rejected, lost_ids: lostIds.slice(0, 20), invariants })}\n`,
);
process.exit(off.length ? 1 : 0);
