import { redis, reportErrors } from '../clients/redis';
import { createLockedCache } from './locked-fill';

/** The instance's cache on the shared Redis connection; waiters get their own subscriber connection. */
export const cache = createLockedCache(redis, () => reportErrors(redis.duplicate(), 'cache subscriber'));
