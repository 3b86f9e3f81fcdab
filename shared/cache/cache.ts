import { connectRedis, redis, reportErrors } from '../platform/clients/redis';
import { once } from '../platform/once';
import { createLockedCache } from './locked-fill';

/** The instance's cache on the shared Redis connection; waiters get their own subscriber connection. */
export const cache = once(() => createLockedCache(redis(), () => reportErrors(connectRedis('subscriber'), 'cache subscriber')));
