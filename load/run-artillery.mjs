// `npm run artillery -- <scenario>`: runs load/artillery/<scenario>.yml against SURGE_TARGET
// (default: the twin on http://127.0.0.1:3000) as SURGE_EMAIL/SURGE_PASSWORD, with telemetry off
// and nothing sent home. The reference scenarios are prepared first (load/artillery/prepare.mjs),
// in .local/artillery/<scenario>-<time>/, and the audit to run afterwards is printed last.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
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
const result = spawnSync(
  process.execPath,
  ['--require', `${here}no-telemetry.cjs`, `${here}node_modules/artillery/bin/run`, 'run', file, ...(prepared?.args ?? []), ...rest],
  { stdio: 'inherit', env: { ...env, ...prepared?.env } },
);
if (prepared) console.error(`then check the invariants: ${prepared.audit}`);
process.exit(result.status ?? 1);
