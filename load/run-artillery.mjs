// `npm run artillery -- <scenario>`: runs load/artillery/<scenario>.yml against SURGE_TARGET
// (default: the twin on http://127.0.0.1:3000) as SURGE_EMAIL/SURGE_PASSWORD, with telemetry off
// and nothing sent home. The reference scenarios are prepared first (load/artillery/prepare.mjs),
// in .local/artillery/<scenario>-<time>/, where Artillery's JSON report goes too; how many answers
// needed a retry (load/artillery/ask.cjs), a waiting room's invariants as its buyers saw them
// (load/artillery/waiting-room.cjs; a run that breaks one exits 1) and the audit to run afterwards
// are printed last.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { prepare } from './artillery/prepare.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
const [scenario, ...rest] = process.argv.slice(2);
const file = `${here}artillery/${scenario}.yml`;
if (!scenario || !existsSync(file)) {
  console.error(`usage: npm run artillery -- <scenario> [artillery options]; scenarios live in ${here}artillery/`);
  process.exit(2);
}
if (!existsSync(`${here}node_modules/artillery`)) {
  console.error('installing Artillery into load/node_modules (once; no browser download)');
  const install = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], {
    cwd: here,
    stdio: 'inherit',
    env: { ...process.env, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1' },
  });
  if (install.status !== 0) process.exit(install.status ?? 1);
}
const env = {
  // The twin's demo account unless told otherwise.
  SURGE_TARGET: 'http://127.0.0.1:3000',
  SURGE_EMAIL: 'demo@surge.test',
  SURGE_PASSWORD: 'surge-demo-password',
  SURGE_ITEM: 'demo-item',
  SURGE_DEAL: 'demo-deal',
  ...process.env,
  ARTILLERY_DISABLE_TELEMETRY: 'true',
};
const prepared = await prepare(scenario, env, fileURLToPath(new URL('../.local/artillery/', import.meta.url))).catch((error) => {
  console.error(`could not prepare ${scenario}: ${error.message}`);
  process.exit(1);
});
// A prepared run keeps Artillery's report beside its buyers, unless told where else.
const report = prepared && !rest.some((arg) => arg === '--output' || arg === '-o') ? prepared.report : undefined;
const result = spawnSync(
  process.execPath,
  [
    '--require',
    `${here}no-telemetry.cjs`,
    `${here}node_modules/artillery/bin/run`,
    'run',
    file,
    ...(prepared?.args ?? []),
    ...(report ? ['--output', report] : []),
    ...rest,
  ],
  { stdio: 'inherit', env: { ...env, ...prepared?.env } },
);
let roomHeld = true;
if (report && existsSync(report)) {
  const { counters } = JSON.parse(readFileSync(report, 'utf8')).aggregate;
  console.error(retriesSummary(counters));
  if (prepared.room) roomHeld = roomInvariants(counters, prepared.room);
}
if (prepared) console.error(`then check the invariants: ${prepared.audit}`);
process.exit(result.status === 0 && !roomHeld ? 1 : (result.status ?? 1));

/** What ask.cjs counted: answers that needed a retry, and the retries by what they followed. */
function retriesSummary(counters) {
  const sum = (suffix) =>
    Object.entries(counters)
      .filter(([name]) => name.endsWith(suffix))
      .reduce((total, [, n]) => total + n, 0);
  const after = Object.entries(counters).flatMap(([name, n]) => (/\.retries_after\./.test(name) ? [`${name.split('.retries_after.')[1]} ×${n}`] : []));
  return `answers that needed a retry: ${sum('.answered_after_retry')} (${sum('.retries')} retries${after.length ? `, after ${after.join(', ')}` : ''}); timeouts: ${sum('.timeouts')}`;
}

/**
 * The waiting room's invariants that its buyers see over HTTP (waiting-room.cjs counted them):
 * every unit sold, no order accepted without a valid pass, no buyer who kept polling lost its
 * place. Printed with the room's figures; true when all held.
 */
function roomInvariants(counters, { buyers, units }) {
  const n = (what) => counters[`room.${what}`] ?? 0;
  console.error(
    `waiting room: ${buyers} buyers for ${units} units; ${n('joins')} joined (${n('joins_before_opening')} before the opening, ${n('joins_sold_out')} refused sold out), ` +
      `${n('stopped_polling')} stopped polling, ${n('status_reads')} status reads, ${n('admitted')} admitted, ${n('passes')} passes (${n('passes_unused')} never used), ` +
      `${n('orders_accepted')} orders accepted, ${n('sold_out_seen')} waiters told sold out, ${n('rogue_orders_refused')} orders without a valid pass refused 403`,
  );
  const invariants = [
    ['every unit sold', units, n('orders_accepted')],
    ['no order accepted without a valid pass', 0, n('rogue_orders_accepted')],
    ['no pass holder refused', 0, n('pass_holders_refused')],
    ['no buyer who kept polling lost its place', 0, n('lost_while_polling')],
  ];
  for (const [name, expected, actual] of invariants)
    console.error(`  ${actual === expected ? 'held' : 'BROKEN'}: ${name} (expected ${expected}, got ${actual})`);
  return invariants.every(([, expected, actual]) => actual === expected);
}
