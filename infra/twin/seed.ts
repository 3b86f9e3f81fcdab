import type { ResultSetHeader } from 'mysql2';
import { createConnection } from 'mysql2/promise';
import { hashPassword } from '../../shared/sessions/password';
import type { Role } from '../../shared/sessions/account-rules';
import { newInboxToken } from '../../shared/mail/inbox-token';
import { upsertItemStock } from '../../shared/sale/orders/items';
import { openSale } from '../../shared/sale/orders/sale';
import { setDealState } from '../../shared/coupons/coupons';
import { findDeal, upsertDeal } from '../../shared/coupons/deals';
import { catalogChanged } from '../../shared/catalog/cached-programs';
import { db } from '../../shared/platform/clients/mysql';
import { feedTokenFor } from '../../shared/mail/feed-tokens';
import { feedPath } from '../../shared/mail/feeds';

export const demoAccounts = [
  { email: 'demo@surge.test', password: 'surge-demo-password', role: 'user' },
  { email: 'admin@surge.test', password: 'surge-admin-password', role: 'admin' },
] as const;

export interface CreatedUser {
  id: number;
  email: string;
  password: string;
  role: Role;
}

/**
 * Inserts users sharing one password with a single multi-row INSERT (one hash, since hashing is
 * slow on purpose). For tests and benchmarks that need many distinct signed-in users.
 */
export async function insertUsers(databaseUrl: string, emails: string[], password: string, role: Role = 'user'): Promise<CreatedUser[]> {
  const conn = await createConnection({ uri: databaseUrl });
  try {
    const hash = await hashPassword(password);
    const [result] = await conn.query<ResultSetHeader>('INSERT INTO users (email, password_hash, role) VALUES ?', [emails.map((email) => [email, hash, role])]);
    // InnoDB hands a multi-row INSERT consecutive auto-increment ids.
    return emails.map((email, i) => ({ id: result.insertId + i, email, password, role }));
  } finally {
    await conn.end();
  }
}

/** Gives each user an inbound address token, in one INSERT; returns the tokens in the users' order. */
export async function insertInboxTokens(databaseUrl: string, userIds: number[]): Promise<string[]> {
  const tokens = userIds.map(() => newInboxToken());
  const conn = await createConnection({ uri: databaseUrl });
  try {
    await conn.query('INSERT INTO inbox_addresses (user_id, token) VALUES ?', [userIds.map((id, i) => [id, tokens[i]])]);
    return tokens;
  } finally {
    await conn.end();
  }
}

export const demoItem = { id: 'demo-item', stock: 1_000, perUserLimit: 100 };
export const demoDeal = { id: 'demo-deal', title: 'Half price for the first 500', limit: 500 };

const CAREER_TAGS = ['backend', 'frontend', 'data', 'devops', 'design', 'product'];
const PROGRAM_TYPES = ['bootcamp', 'course', 'mentoring', 'workshop'];
const DEMO_PROGRAMS = 120;

/** Enough catalog to page through: every career tag with every type, five of each. */
function demoPrograms(): unknown[][] {
  return Array.from({ length: DEMO_PROGRAMS }, (_, i) => {
    const tag = CAREER_TAGS[i % CAREER_TAGS.length]!;
    const type = PROGRAM_TYPES[Math.floor(i / CAREER_TAGS.length) % PROGRAM_TYPES.length]!;
    return [`${tag[0]!.toUpperCase()}${tag.slice(1)} ${type} #${i + 1}`, tag, type, `A ${type} for ${tag} careers.`];
  });
}

/**
 * Demo data for the twin. Passwords are reset on every start so the printed credentials always
 * work; the demo sale is opened once and left alone after its first order. Runs after the
 * functions' environment is set, since it opens the sale through the same code they use.
 */
/** Demo data through the shared modules, configured by the twin's own (admin) environment. */
export async function seed(): Promise<{ demoFeedPath: string }> {
  if (!(await findDeal(demoDeal.id))) {
    // Open from now for a week, so the demo deal can be tried right away.
    const deal = { ...demoDeal, opensAt: Date.now(), closesAt: Date.now() + 7 * 24 * 3_600_000 };
    await setDealState(deal.id, deal.opensAt, deal.closesAt, deal.limit);
    await upsertDeal(deal);
  }
  if (await upsertItemStock(demoItem.id, demoItem.stock, demoItem.perUserLimit)) {
    await openSale(demoItem.id, demoItem.stock, demoItem.perUserLimit).catch((error: { code?: string }) => {
      if (error.code !== 'SALE_STARTED') throw error;
    });
  }
  const conn = await db().getConnection();
  try {
    const [[{ programs }]] = (await conn.query('SELECT COUNT(*) AS programs FROM programs')) as unknown as [[{ programs: number }]];
    if (Number(programs) === 0) {
      await conn.query('INSERT INTO programs (title, career_tag, type, description) VALUES ?', [demoPrograms()]);
      // Written behind the API's back: readers must move to a new version as after any admin write.
      await catalogChanged();
    }
    for (const account of demoAccounts) {
      await conn.query(
        `INSERT INTO users (email, password_hash, role) VALUES (?, ?, ?)
         ON DUPLICATE KEY UPDATE password_hash = VALUES(password_hash), role = VALUES(role)`,
        [account.email, await hashPassword(account.password), account.role],
      );
    }
  } finally {
    conn.release();
  }
  // The demo reader's feed of all their newsletters, printed by npm start: mail their inbox address and it shows there.
  const [[demoUser]] = (await db().query('SELECT id FROM users WHERE email = ?', [demoAccounts[0].email])) as unknown as [[{ id: number }]];
  return { demoFeedPath: feedPath(await feedTokenFor(Number(demoUser.id)), 'atom', 'all') };
}
