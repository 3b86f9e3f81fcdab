import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { storeCredentials } from '../shared/platform/clients/credentials';
import { migrateDatabase } from '../shared/platform/db/deploy';
import { ensureDeployedFirstAdmin } from '../shared/sessions/first-admin';

/** Time left to the handler's own end that connecting may not use: the migrations themselves need it. */
const MIGRATION_RESERVE_MS = 60_000;

/** Applies pending migrations, then creates the first admin; a failure fails the deployment that triggered it. */
export const handler = middy<unknown, { applied: number[]; firstAdmin?: 'created' | 'exists' }>()
  .use(storeCredentials())
  .handler(async (_event, context: Context) => {
    const applied = await migrateDatabase(() => Math.max(0, context.getRemainingTimeInMillis() - MIGRATION_RESERVE_MS));
    const firstAdmin = await ensureDeployedFirstAdmin();
    return firstAdmin ? { applied, firstAdmin } : { applied };
  });
