import middy from '@middy/core';
import { databaseEnv, readEnv } from '../shared/config';
import { migrate } from '../shared/db/migrate';
import { logger } from '../shared/logger';

const { DATABASE_URL } = readEnv(databaseEnv);

/** Applies pending migrations; a failure fails the deployment that triggered it. */
export const handler = middy<unknown, { applied: number[] }>().handler(async () => {
  const applied = await migrate(DATABASE_URL);
  logger.info('Migrations applied', { applied });
  return { applied };
});
