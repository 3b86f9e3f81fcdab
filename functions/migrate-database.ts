import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { databaseCredentials, loadedSecret, refreshSecret, storeCredentials } from '../shared/clients/credentials';
import { databaseEnv, readEnv } from '../shared/config';
import { migrate, type MigrationTarget } from '../shared/db/migrate';
import { isRefusedCredentials } from '../shared/errors';
import { logger } from '../shared/logger';

/** Time left to the handler's own end that connecting may not use: the migrations themselves need it. */
const MIGRATION_RESERVE_MS = 60_000;

/**
 * Applies pending migrations; a failure fails the deployment that triggered it. A password that
 * rotated since the secret was read (a deploy during the scheduled rotation) is read again once.
 */
export const handler = middy<unknown, { applied: number[] }>()
  .use(storeCredentials())
  .handler(async (_event, context: Context) => {
    const { DATABASE_URL, DATABASE_SECRET_ID, DATABASE_TLS } = readEnv(databaseEnv);
    const target = (): MigrationTarget => ({
      url: DATABASE_URL,
      ...(DATABASE_SECRET_ID ? databaseCredentials(loadedSecret(DATABASE_SECRET_ID)) : {}),
      tls: DATABASE_TLS,
      connectForMs: Math.max(0, context.getRemainingTimeInMillis() - MIGRATION_RESERVE_MS),
    });
    const applied = await migrate(target()).catch(async (error: unknown) => {
      if (!DATABASE_SECRET_ID || !isRefusedCredentials(error)) throw error;
      await refreshSecret(DATABASE_SECRET_ID);
      return migrate(target());
    });
    logger.info('Migrations applied', { applied });
    return { applied };
  });
