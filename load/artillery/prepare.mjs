// What the prepared scenarios need before they run, made through the target's admin endpoints:
// the buyers, each signed in (POST /admin/load-tests/buyers, not in prod), and a fresh sale
// (PUT /items/{id}/stock), deal (PUT /deals/{id}) or sale with a waiting room in front of it
// (PUT /items/{id}/waiting-room). Signs in as SURGE_ADMIN_EMAIL with SURGE_ADMIN_PASSWORD, or the
// admin of SURGE_ADMIN_SECRET_FILE ({"email","password"}, as the AWS CLI prints the first admin's
// secret); the twin's demo admin by default.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The reference run: as many buyers as units, each asking once. */
const REFERENCE_BUYERS = 10_000;
/** Buyers asked for per request, within the endpoint's 5,000 and well inside its 10 s. */
const BUYERS_PER_REQUEST = 2_500;
/** Artillery's start, from the end of the preparation to its first virtual user, at most. */
const ARTILLERY_START_MS = 5_000;

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

const setting = (env, name, fallback) => (env[name] === undefined || env[name] === '' ? fallback : Number(env[name]));

/**
 * What each prepared scenario needs: how many buyers, and what they race for, opened fresh each
 * run (a sale's stock cannot be set twice): the environment the run reads it from, and any more
 * Artillery arguments.
 */
const preparations = {
  reference: {
    buyers: () => REFERENCE_BUYERS,
    open: async ({ target, cookie, id }) => {
      await call(target, 'PUT', `/items/${id}/stock`, { cookie, body: { quantity: REFERENCE_BUYERS, perUserLimit: 1 } });
      return { env: { SURGE_ITEM: id }, opened: `${REFERENCE_BUYERS} units of item ${id}` };
    },
  },
  'reference-coupons': {
    buyers: () => REFERENCE_BUYERS,
    open: async ({ target, cookie, id }) => {
      const now = Date.now();
      const window = { opensAt: new Date(now - 1_000).toISOString(), closesAt: new Date(now + 3_600_000).toISOString() };
      await call(target, 'PUT', `/deals/${id}`, { cookie, body: { title: 'Reference run', ...window, limit: REFERENCE_BUYERS } });
      return { env: { SURGE_DEAL: id }, opened: `deal ${id} of ${REFERENCE_BUYERS} coupons` };
    },
  },
  // As `npm run bench -- waiting-room` (load/scenarios/waiting-room.ts): a tenth as many units as
  // buyers, one each; the crowd arrives over SURGE_ROOM_ARRIVAL_SECONDS and the room opens a third
  // of the way in, so a share joins before the opening (shuffled) and the rest after it.
  'waiting-room': {
    buyers: (env) => setting(env, 'SURGE_ROOM_BUYERS', 2_000),
    open: async ({ target, cookie, id, env, buyers }) => {
      const units = Math.max(1, Math.floor(buyers / 10));
      const arrivalSeconds = setting(env, 'SURGE_ROOM_ARRIVAL_SECONDS', 20);
      const room = {
        opensAt: new Date(Date.now() + ARTILLERY_START_MS + (arrivalSeconds * 1000) / 3).toISOString(),
        // The units admitted in about 20 s by default.
        admitPerSecond: setting(env, 'SURGE_ROOM_ADMIT_PER_SECOND', Math.max(1, Math.round(units / 20))),
        passSeconds: setting(env, 'SURGE_ROOM_PASS_SECONDS', 10),
        graceSeconds: setting(env, 'SURGE_ROOM_GRACE_SECONDS', 10),
        // What the twin serves beside the joins, claims and orders with Artillery on the same cores:
        // a budget above it makes the polls late, and buyers who poll as told lose their turns.
        statusReadsPerSecond: setting(env, 'SURGE_ROOM_READS_PER_SECOND', 200),
      };
      await call(target, 'PUT', `/items/${id}/stock`, { cookie, body: { quantity: units, perUserLimit: 1 } });
      await call(target, 'PUT', `/items/${id}/waiting-room`, { cookie, body: room });
      return {
        env: { SURGE_ITEM: id, SURGE_ROOM_OPENS_AT: room.opensAt },
        args: ['--overrides', JSON.stringify({ config: { phases: [{ name: 'the crowd arrives', duration: arrivalSeconds, arrivalCount: buyers }] } })],
        opened: `${units} units of item ${id} behind a room opening at ${room.opensAt} (${JSON.stringify({ ...room, opensAt: undefined })})`,
        room: { buyers, units },
      };
    },
  },
};

/**
 * Prepares `scenario` if it needs it: returns the environment and Artillery arguments it runs
 * with, where its report goes, the audit command to run afterwards and, for a waiting room, its
 * buyers and units (load/run-artillery.mjs holds the room's invariants to them); undefined for a
 * scenario that needs nothing.
 */
export async function prepare(scenario, env, runsDir) {
  const preparation = preparations[scenario];
  if (!preparation) return undefined;
  const target = env.SURGE_TARGET.replace(/\/$/, '');
  const stamp = new Date().toISOString().replace(/[-:.]/g, '').replace('T', '-').slice(0, 15);
  const id = `ref-${stamp}-${Math.random().toString(36).slice(2, 6)}`;
  const dir = join(runsDir, `${scenario}-${stamp}`);
  mkdirSync(dir, { recursive: true });

  const admin = await call(target, 'POST', '/sessions', { body: adminCredentials(env) });
  const started = performance.now();
  const count = preparation.buyers(env);
  const lines = ['userId,cookie'];
  for (let made = 0; made < count; made += BUYERS_PER_REQUEST) {
    const { body } = await call(target, 'POST', '/admin/load-tests/buyers', {
      cookie: admin.cookie,
      body: { count: Math.min(BUYERS_PER_REQUEST, count - made) },
    });
    for (const buyer of body.buyers) lines.push(`${buyer.userId},${buyer.cookie}`);
  }
  const buyers = join(dir, 'buyers.csv');
  writeFileSync(buyers, `${lines.join('\n')}\n`, { mode: 0o600 });
  const opened = await preparation.open({ target, cookie: admin.cookie, id, env, buyers: count });
  const accepted = join(dir, 'accepted.txt');
  writeFileSync(accepted, '');
  console.error(`prepared ${lines.length - 1} signed-in buyers in ${Math.round(performance.now() - started)} ms (${buyers}); opened ${opened.opened}`);
  return {
    env: { ...opened.env, SURGE_ACCEPTED_FILE: accepted },
    args: ['--payload', buyers, ...(opened.args ?? [])],
    report: join(dir, 'report.json'),
    room: opened.room,
    audit: `npm run audit -- ${target} ${id} ${accepted}${scenario === 'reference-coupons' ? ' --deal' : ''}`,
  };
}
