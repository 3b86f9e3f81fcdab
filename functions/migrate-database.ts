import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { databaseCredentials, loadedSecret, storeCredentials } from '../shared/clients/credentials';
import { databaseEnv, readEnv } from '../shared/config';
import { migrate } from '../shared/db/migrate';
import { logger } from '../shared/logger';

/** Time left to the handler's own end that connecting may not use: the migrations themselves need it. */
const MIGRATION_RESERVE_MS = 60_000;

/** Applies pending migrations; a failure fails the deployment that triggered it. */
export const handler = middy<unknown, { applied: number[] }>()
  .use(storeCredentials())
  .handler(async (_event, context: Context) => {
    const { DATABASE_URL, DATABASE_SECRET_ID, DATABASE_TLS } = readEnv(databaseEnv);
    const applied = await migrate({
      url: DATABASE_URL,
      ...(DATABASE_SECRET_ID ? databaseCredentials(loadedSecret(DATABASE_SECRET_ID)) : {}),
      tls: DATABASE_TLS,
      connectForMs: Math.max(0, context.getRemainingTimeInMillis() - MIGRATION_RESERVE_MS),
    });
    logger.info('Migrations applied', { applied });
    return { applied };
  });
