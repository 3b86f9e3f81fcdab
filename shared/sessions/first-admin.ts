import { firstAdminCredentials, loadedSecret } from '../platform/clients/credentials';
import { firstAdminEnv, readEnv } from '../platform/config';
import { logger } from '../platform/logger';
import { ensureFirstAdmin } from './users';

/** Creates the first admin the deployment names (FIRST_ADMIN_SECRET_ID) if its address is not taken yet (see ensureFirstAdmin); undefined when it names none. */
export async function ensureDeployedFirstAdmin(): Promise<'created' | 'exists' | undefined> {
  const { FIRST_ADMIN_SECRET_ID } = readEnv(firstAdminEnv);
  if (!FIRST_ADMIN_SECRET_ID) return undefined;
  const firstAdmin = await ensureFirstAdmin(firstAdminCredentials(loadedSecret(FIRST_ADMIN_SECRET_ID)));
  logger.info(firstAdmin === 'created' ? 'First admin created' : 'First admin exists; left as it is');
  return firstAdmin;
}
