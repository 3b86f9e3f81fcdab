import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { databaseCredentials, firstAdminCredentials, loadedSecret, refreshSecret, storeCredentials } from '../shared/platform/clients/credentials';
import { databaseEnv, firstAdminEnv, readEnv } from '../shared/platform/config';
import { migrate, type MigrationTarget } from '../shared/platform/db/migrate';
import { isRefusedCredentials } from '../shared/platform/errors';
import { logger } from '../shared/platform/logger';
import { ensureFirstAdmin } from '../shared/sessions/users';

/** Time left to the handler's own end that connecting may not use: the migrations themselves need it. */
const MIGRATION_RESERVE_MS = 60_000;

/**
 * Applies pending migrations, then creates the first admin if its address is not taken yet (see
 * ensureFirstAdmin); a failure fails the deployment that triggered it. A database password that
 * rotated since the secret was read (a deploy during the scheduled rotation) is read again once.
 */
export const handler = middy<unknown, { applied: number[]; firstAdmin?: 'created' | 'exists' }>()
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
    const { FIRST_ADMIN_SECRET_ID } = readEnv(firstAdminEnv);
    if (!FIRST_ADMIN_SECRET_ID) return { applied };
    const firstAdmin = await ensureFirstAdmin(firstAdminCredentials(loadedSecret(FIRST_ADMIN_SECRET_ID)));
    logger.info(firstAdmin === 'created' ? 'First admin created' : 'First admin exists; left as it is');
    return { applied, firstAdmin };
  });
