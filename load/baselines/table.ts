import { functions } from '../../functions/table';
import type { Handler } from '../../infra/twin/lambda/lambda';
import type { ExtraFunction } from '../../infra/twin/extra-functions';
import { baselineMailDomain } from './mail-domain';

/** Sized as the API functions they stand beside, with what a sale's or a deal's function needs. */
const reservationApi = { memoryMb: 512, timeoutSeconds: 10, env: ['redis', 'database', 'sessions'] } satisfies Partial<ExtraFunction>;

/**
 * Baselines the twin serves beside the real functions when the benches start it (its extra
 * functions: `SURGE_EXTRA_FUNCTIONS` names this module); never deployed.
 */
export const extraFunctions: ExtraFunction[] = [
  {
    id: 'baseline-orders-for-update',
    description: 'POST an order the way the original service did: a MySQL transaction with SELECT … FOR UPDATE',
    trigger: { kind: 'http', method: 'POST', path: '/__baseline/items/{itemId}/orders' },
    ...reservationApi,
    load: async () => (await import('./orders-for-update')).handler as Handler,
  },
  {
    id: 'baseline-orders-conditional-transaction',
    description: 'POST an order as one short MySQL transaction: a conditional UPDATE of the stock, then the INSERT',
    trigger: { kind: 'http', method: 'POST', path: '/__baseline/conditional-transaction/items/{itemId}/orders' },
    ...reservationApi,
    load: async () => (await import('./orders-conditional')).transactionHandler as Handler,
  },
  {
    id: 'baseline-orders-conditional-autocommit',
    description: 'POST an order as the conditional UPDATE and the INSERT, each in autocommit (an upper bound)',
    trigger: { kind: 'http', method: 'POST', path: '/__baseline/conditional-autocommit/items/{itemId}/orders' },
    ...reservationApi,
    load: async () => (await import('./orders-conditional')).autocommitHandler as Handler,
  },
  {
    id: 'baseline-coupons-for-update',
    description: 'POST a coupon the way the original service did: a MySQL transaction with SELECT … FOR UPDATE',
    trigger: { kind: 'http', method: 'POST', path: '/__baseline/deals/{dealId}/coupons' },
    ...reservationApi,
    load: async () => (await import('./coupons-for-update')).handler as Handler,
  },
  {
    id: 'baseline-coupons-conditional-transaction',
    description: "POST a coupon as one short MySQL transaction: a conditional UPDATE of the deal's count, then the INSERT",
    trigger: { kind: 'http', method: 'POST', path: '/__baseline/conditional-transaction/deals/{dealId}/coupons' },
    ...reservationApi,
    load: async () => (await import('./coupons-conditional')).transactionHandler as Handler,
  },
  {
    id: 'baseline-coupons-conditional-autocommit',
    description: "POST a coupon as the conditional UPDATE of the deal's count and the INSERT, each in autocommit (an upper bound)",
    trigger: { kind: 'http', method: 'POST', path: '/__baseline/conditional-autocommit/deals/{dealId}/coupons' },
    ...reservationApi,
    load: async () => (await import('./coupons-conditional')).autocommitHandler as Handler,
  },
  {
    id: 'baseline-read-floor',
    description: 'GET one Redis key as large as a read path reads, answering a body as large as its own: the floor the path is held to',
    trigger: { kind: 'http', method: 'GET', path: '/__baseline/floor' },
    memoryMb: 512,
    timeoutSeconds: 10,
    env: ['redis'],
    load: async () => (await import('./floor')).handler as Handler,
  },
  {
    id: 'baseline-programs-no-cache',
    description: 'GET a page of programs straight from MySQL, without the cache',
    trigger: { kind: 'http', method: 'GET', path: '/__baseline/programs' },
    memoryMb: 512,
    timeoutSeconds: 10,
    env: ['database'],
    load: async () => (await import('./programs-no-cache')).handler as Handler,
  },
  {
    // Sized and triggered like the real mail function, so only the newsletter lookup differs.
    ...functions.find((f) => f.id === 'receive-mail')!,
    id: 'baseline-mail-cache-only',
    mailDomain: baselineMailDomain,
    description: 'Receives inbound mail finding the newsletter through a cache without a lock (the stampede-prone way)',
    load: async () => (await import('./newsletters-cache-only')).handler as Handler,
  },
];
