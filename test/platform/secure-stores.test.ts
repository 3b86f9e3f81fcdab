import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis, type RedisOptions } from 'ioredis';
import { createConnection, type ConnectionOptions } from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDatabase, startRedis, type Service } from '../../infra/twin/services/services';
import { ensureTwinCertificates, type TwinCertificates } from '../../infra/twin/services/tls';

const STATE_DIR = `.local/test-secure-${randomBytes(4).toString('hex')}`;
const DATABASE = 'surge_secure';
// Characters a URL must escape, so a password that reaches a URL unescaped shows.
const REDIS_PASSWORD = 'redis:p@ss/word';
const APP_USER = { user: 'surge_app', password: 'db:p@ss/word' };

/** Connects and pings once, without retries; rejects with what the connection reported (ioredis itself only says it closed). */
async function ping(url: string, options: RedisOptions): Promise<string> {
  const client = new Redis(url, { ...options, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  let reported: Error | undefined;
  client.on('error', (error: Error) => (reported ??= error));
  try {
    await client.connect();
    return await client.ping();
  } catch (error) {
    throw reported ?? error;
  } finally {
    client.disconnect();
  }
}

/** Who the server says the connection logged in as, and the TLS version it runs over ('' for none). */
async function session(options: ConnectionOptions): Promise<{ user: string; tls: string }> {
  const conn = await createConnection(options);
  try {
    const [[who]] = (await conn.query('SELECT CURRENT_USER() AS user')) as unknown as [[{ user: string }]];
    const [[status]] = (await conn.query("SHOW SESSION STATUS LIKE 'Ssl_version'")) as unknown as [[{ Value: string }]];
    return { user: who.user, tls: status.Value };
  } finally {
    await conn.end();
  }
}

describe('data stores as AWS runs them', () => {
  let certificates: TwinCertificates;
  let redis: Service;
  let database: Service;

  beforeAll(async () => {
    // test/setup/env.ts points these at the suite's stores, which would be reused; this file starts its own.
    delete process.env.REDIS_URL;
    delete process.env.DATABASE_URL;
    certificates = await ensureTwinCertificates(join(STATE_DIR, 'tls'));
    const secure = { certificates, redisPassword: REDIS_PASSWORD, database: APP_USER };
    // Each kept as it comes up, so afterAll stops it even when the other fails to start.
    const started = await Promise.allSettled([
      startRedis(STATE_DIR, false, secure).then((service) => (redis = service)),
      startDatabase(STATE_DIR, DATABASE, secure).then((service) => (database = service)),
    ]);
    for (const result of started) if (result.status === 'rejected') throw result.reason;
  });
  afterAll(async () => {
    await Promise.all([redis?.stop(), database?.stop()]);
    rmSync(STATE_DIR, { recursive: true, force: true });
  });

  describe('the twin certificate', () => {
    it('keeps its private key from anyone but its owner, and is reused while valid', async () => {
      // Act
      const again = await ensureTwinCertificates(join(STATE_DIR, 'tls'));

      // Assess
      expect(statSync(certificates.keyFile).mode & 0o777).toBe(0o600);
      expect(again).toEqual(certificates);
    });

    it('is made anew when the files in place do not verify', async () => {
      // Prepare: a set of its own, whose server certificate is then damaged.
      const dir = join(STATE_DIR, 'damaged-tls');
      const first = await ensureTwinCertificates(dir);
      writeFileSync(first.certFile, 'not a certificate');

      // Act
      const second = await ensureTwinCertificates(dir);

      // Assess
      expect(second.ca).not.toBe(first.ca);
      expect(statSync(second.certFile).size).toBeGreaterThan(100);
    });
  });

  describe('Redis', () => {
    it('answers a client that verifies its certificate against the twin CA and authenticates', async () => {
      // Act
      const reply = await ping(redis.url, { password: redis.password, tls: { ca: certificates.ca, rejectUnauthorized: true } });
      const adminReply = await ping(redis.adminUrl, { tls: redis.adminTls });

      // Assess: the functions' URL names TLS and carries no password; the admin URL carries it.
      expect(redis.url).toMatch(/^rediss:\/\/127\.0\.0\.1:\d+$/);
      expect(redis.password).toBe(REDIS_PASSWORD);
      expect(reply).toBe('PONG');
      expect(adminReply).toBe('PONG');
    });

    it('drops a plaintext connection to its port', async () => {
      const plaintext = ping(redis.url.replace(/^rediss:/, 'redis:'), { password: redis.password });

      await expect(plaintext).rejects.toThrow(/ECONNRESET|Connection is closed/);
    });

    it('refuses a wrong password, and a client without one', async () => {
      const tls = { ca: certificates.ca };

      await expect(ping(redis.url, { password: 'wrong', tls })).rejects.toThrow(/^WRONGPASS/);
      await expect(ping(redis.url, { tls })).rejects.toThrow(/^NOAUTH/);
    });

    it('fails a client that does not know the twin CA at verification', async () => {
      const unknownCa = ping(redis.url, { password: redis.password, tls: { rejectUnauthorized: true } });

      await expect(unknownCa).rejects.toMatchObject({ code: 'SELF_SIGNED_CERT_IN_CHAIN' });
    });
  });

  describe('MariaDB', () => {
    const verifying = () => ({ ca: certificates.ca, rejectUnauthorized: true, verifyIdentity: true });

    it('lets the application user in over TLS verified against the twin CA, to its database', async () => {
      // Act
      const app = await session({ uri: database.url, password: database.password, ssl: verifying() });
      const conn = await createConnection({ uri: database.url, password: database.password, ssl: verifying() });
      await conn.query('CREATE TABLE IF NOT EXISTS probe (id INT PRIMARY KEY)');
      await conn.end();

      // Assess: the functions' URL names the application user and carries no password.
      expect(database.url).toMatch(new RegExp(`^mysql://${APP_USER.user}@127\\.0\\.0\\.1:\\d+/${DATABASE}$`));
      expect(database.password).toBe(APP_USER.password);
      expect(app).toEqual({ user: `${APP_USER.user}@%`, tls: expect.stringMatching(/^TLSv1\.[23]$/) });
    });

    it('refuses plaintext, even to root whose account does not ask for TLS', async () => {
      // Prepare: root gets in over TLS with the same credentials.
      const overTls = await session({ uri: database.adminUrl, ssl: database.adminTls });

      // Act
      const rootPlaintext = session({ uri: database.adminUrl });
      const appPlaintext = session({ uri: database.url, password: database.password });

      // Assess: MariaDB reports require_secure_transport's refusal as access denied (MySQL has an error of its own).
      expect(overTls).toEqual({ user: 'root@127.0.0.1', tls: expect.stringMatching(/^TLSv1\.[23]$/) });
      // Both handled at once: awaited one after the other, the second's refusal may come first and go unhandled.
      await Promise.all([
        expect(rootPlaintext).rejects.toMatchObject({ code: 'ER_ACCESS_DENIED_ERROR' }),
        expect(appPlaintext).rejects.toMatchObject({ code: 'ER_ACCESS_DENIED_ERROR' }),
      ]);
    });

    it('refuses a wrong password over TLS', async () => {
      const wrong = session({ uri: database.url, password: 'wrong', ssl: verifying() });

      await expect(wrong).rejects.toMatchObject({ code: 'ER_ACCESS_DENIED_ERROR' });
    });

    it('fails a client that does not know the twin CA at verification', async () => {
      const unknownCa = session({ uri: database.url, password: database.password, ssl: { rejectUnauthorized: true } });

      await expect(unknownCa).rejects.toThrow('self-signed certificate in certificate chain');
    });
  });

  it('is verified by a process that trusts the twin CA through NODE_EXTRA_CA_CERTS alone, as the functions are', async () => {
    // Prepare: clients configured as on AWS, with no CA of their own: the default trust store decides.
    const script = `
      import { Redis } from 'ioredis';
      import { createConnection } from 'mysql2/promise';
      const redis = new Redis(process.env.REDIS_URL, { password: process.env.REDIS_PASSWORD, tls: {}, maxRetriesPerRequest: 0, retryStrategy: () => null });
      const pong = await redis.ping();
      redis.disconnect();
      const db = await createConnection({ uri: process.env.DATABASE_URL, password: process.env.DATABASE_PASSWORD, ssl: { rejectUnauthorized: true, verifyIdentity: true } });
      const [[status]] = await db.query("SHOW SESSION STATUS LIKE 'Ssl_version'");
      await db.end();
      console.log(JSON.stringify({ pong, tls: status.Value }));
    `;
    const env = {
      PATH: process.env.PATH,
      NODE_EXTRA_CA_CERTS: certificates.caFile,
      REDIS_URL: redis.url,
      REDIS_PASSWORD: redis.password,
      DATABASE_URL: database.url,
      DATABASE_PASSWORD: database.password,
    };

    // Act
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { cwd: process.cwd(), env });

    // Assess
    expect(JSON.parse(stdout)).toEqual({ pong: 'PONG', tls: expect.stringMatching(/^TLSv1\.[23]$/) });
  });
});
