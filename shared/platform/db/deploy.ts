import { databaseCredentials, loadedSecret, refreshSecret } from '../clients/credentials';
import { databaseEnv, readEnv } from '../config';
import { isRefusedCredentials } from '../errors';
import { logger } from '../logger';
import { migrate, type MigrationTarget } from './migrate';

/**
 * Applies pending migrations to the function's own database, trying to connect for as long as
 * `connectForMs()` says at each attempt. A database password that rotated since the secret was read (a deploy during the
 * scheduled rotation) is read again once.
 */
export async function migrateDatabase(connectForMs: () => number): Promise<number[]> {
  const { DATABASE_URL, DATABASE_SECRET_ID, DATABASE_TLS } = readEnv(databaseEnv);
  const target = (): MigrationTarget => ({
    url: DATABASE_URL,
    ...(DATABASE_SECRET_ID ? databaseCredentials(loadedSecret(DATABASE_SECRET_ID)) : {}),
    tls: DATABASE_TLS,
    connectForMs: connectForMs(),
  });
  const applied = await migrate(target()).catch(async (error: unknown) => {
    if (!DATABASE_SECRET_ID || !isRefusedCredentials(error)) throw error;
    await refreshSecret(DATABASE_SECRET_ID);
    return migrate(target());
  });
  logger.info('Migrations applied', { applied });
  return applied;
}
