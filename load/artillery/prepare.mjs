// What the reference scenarios need before they run, made through the target's admin endpoints:
// the buyers, each signed in (POST /admin/load-tests/buyers, not in prod), and a fresh sale
// (PUT /items/{id}/stock) or deal (PUT /deals/{id}). Signs in as SURGE_ADMIN_EMAIL with
// SURGE_ADMIN_PASSWORD, or the admin of SURGE_ADMIN_SECRET_FILE ({"email","password"}, as the AWS
// CLI prints the first admin's secret); the twin's demo admin by default.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The reference run: as many buyers as units, each asking once. */
const BUYERS = 10_000;
/** Buyers asked for per request, within the endpoint's 5,000 and well inside its 10 s. */
const BUYERS_PER_REQUEST = 2_500;

async function call(target, method, path, { cookie, body } = {}) {
  const res = await fetch(`${target}${path}`, {
    method,
    headers: { ...(cookie ? { cookie } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status} ${text.slice(0, 300)}`);
  return { body: text ? JSON.parse(text) : undefined, cookie: res.headers.getSetCookie()[0]?.split(';')[0] };
}

function adminCredentials(env) {
  if (env.SURGE_ADMIN_SECRET_FILE) return JSON.parse(readFileSync(env.SURGE_ADMIN_SECRET_FILE, 'utf8'));
  return { email: env.SURGE_ADMIN_EMAIL ?? 'admin@surge.test', password: env.SURGE_ADMIN_PASSWORD ?? 'surge-admin-password' };
}

/** Opens what the buyers race for, fresh each run: a sale's stock cannot be set twice. */
const opens = {
  reference: async (target, cookie, id) => {
    await call(target, 'PUT', `/items/${id}/stock`, { cookie, body: { quantity: BUYERS, perUserLimit: 1 } });
    return { SURGE_ITEM: id };
  },
  'reference-coupons': async (target, cookie, id) => {
    const now = Date.now();
    const window = { opensAt: new Date(now - 1_000).toISOString(), closesAt: new Date(now + 3_600_000).toISOString() };
    await call(target, 'PUT', `/deals/${id}`, { cookie, body: { title: 'Reference run', ...window, limit: BUYERS } });
    return { SURGE_DEAL: id };
  },
};

/**
 * Prepares `scenario` if it needs it: returns the environment and Artillery arguments it runs
 * with, where its report goes, and the audit command to run afterwards; undefined for a scenario
 * that needs nothing.
 */
export async function prepare(scenario, env, runsDir) {
  const open = opens[scenario];
  if (!open) return undefined;
  const target = env.SURGE_TARGET.replace(/\/$/, '');
  const stamp = new Date().toISOString().replace(/[-:.]/g, '').replace('T', '-').slice(0, 15);
  const id = `ref-${stamp}-${Math.random().toString(36).slice(2, 6)}`;
  const dir = join(runsDir, `${scenario}-${stamp}`);
  mkdirSync(dir, { recursive: true });

  const admin = await call(target, 'POST', '/sessions', { body: adminCredentials(env) });
  const started = performance.now();
  const lines = ['userId,cookie'];
  for (let made = 0; made < BUYERS; made += BUYERS_PER_REQUEST) {
    const { body } = await call(target, 'POST', '/admin/load-tests/buyers', { cookie: admin.cookie, body: { count: Math.min(BUYERS_PER_REQUEST, BUYERS - made) } });
    for (const buyer of body.buyers) lines.push(`${buyer.userId},${buyer.cookie}`);
  }
  const buyers = join(dir, 'buyers.csv');
  writeFileSync(buyers, `${lines.join('\n')}\n`, { mode: 0o600 });
  const opened = await open(target, admin.cookie, id);
  const accepted = join(dir, 'accepted.txt');
  writeFileSync(accepted, '');
  console.error(`prepared ${lines.length - 1} signed-in buyers in ${Math.round(performance.now() - started)} ms (${buyers}); opened ${id} with ${BUYERS} units`);
  return {
    env: { ...opened, SURGE_ACCEPTED_FILE: accepted },
    args: ['--payload', buyers],
    report: join(dir, 'report.json'),
    audit: `npm run audit -- ${target} ${id} ${accepted}${scenario === 'reference-coupons' ? ' --deal' : ''}`,
  };
}
