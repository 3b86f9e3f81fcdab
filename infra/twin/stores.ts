/** The twin's data stores and the emulator: started (or reached through their env URLs), AWS-like when asked. */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { startRedisCluster } from './services/redis-cluster';
import { startDatabase, startEmulator, startRedis, type SecureStores, type Service } from './services/services';
import { ensureTwinCertificates, type TwinCertificates } from './services/tls';
import type { TwinOptions } from './options';

/** AWS-like stores' credentials: the CA's certificates, Redis AUTH's password and the functions' MariaDB user. */
export type StoreCredentials = Required<SecureStores>;

/**
 * Fresh credentials for AWS-like stores (options.awsStores), checked before anything starts: the
 * process must already trust the twin's CA, as the functions' runtime must.
 */
export async function storeCredentials(options: Pick<TwinOptions, 'awsStores' | 'redisCluster' | 'stateDir'>): Promise<StoreCredentials | undefined> {
  if (options.redisCluster && options.awsStores) throw new Error('--redis-cluster runs a plaintext cluster: it does not combine with --aws-stores yet');
  if (!options.awsStores) return undefined;
  return {
    certificates: await trustedCertificates(options.stateDir),
    redisPassword: randomBytes(24).toString('hex'),
    database: { user: 'surge', password: randomBytes(24).toString('hex') },
  };
}

/** Certificates for AWS-like stores, once the process trusts their CA as the functions' runtime must. */
async function trustedCertificates(stateDir: string): Promise<TwinCertificates> {
  const certificates = await ensureTwinCertificates(join(stateDir, 'tls'));
  if (process.env.NODE_EXTRA_CA_CERTS !== certificates.caFile) {
    throw new Error(`AWS-like stores need this process started with NODE_EXTRA_CA_CERTS=${certificates.caFile} (npm start does that)`);
  }
  return certificates;
}

export interface RunningStores {
  redis: Service;
  database: Service;
  emulator: Service;
  stop(): Promise<void>;
}

/** Redis (one node or a cluster), MariaDB and the SQS/S3 emulator, side by side. */
export async function startStores(
  options: Pick<TwinOptions, 'redisCluster' | 'durableRedis' | 'stateDir' | 'database' | 'onRestart'>,
  secure: StoreCredentials | undefined,
): Promise<RunningStores> {
  const [redis, database, emulator] = await Promise.all([
    options.redisCluster
      ? startRedisCluster(options.stateDir, options.durableRedis ?? true)
      : startRedis(options.stateDir, options.durableRedis ?? true, secure),
    startDatabase(options.stateDir, options.database, secure, () => options.onRestart?.('database')),
    startEmulator(options.stateDir),
  ]);
  return { redis, database, emulator, stop: async () => void (await Promise.all([redis.stop(), database.stop(), emulator.stop()])) };
}
