import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { couponsOf } from '../shared/coupons/mine';

export const handler = api({ access: 'user' }).handler(async ({ principal }) => json(200, { coupons: await couponsOf(principal.userId) }));
