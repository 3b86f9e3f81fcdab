import * as z from '../shared/platform/zod';
import { NotFoundError } from '../shared/platform/errors';
import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { issuedCount } from '../shared/coupons/coupons';
import { findDeal } from '../shared/coupons/deals';
import { DealId } from '../shared/coupons/model';

const Params = z.object({ dealId: DealId });
const Deal = z.strictObject({ id: DealId, title: z.string(), opensAt: z.iso.datetime(), closesAt: z.iso.datetime(), limit: z.int(), remaining: z.int() });

export const handler = api({ access: 'public', params: Params, answers: { 200: Deal }, errors: ['NOT_FOUND'] }).handler(async ({ input }) => {
  const [deal, issued] = await Promise.all([findDeal(input.params.dealId), issuedCount(input.params.dealId)]);
  if (!deal) throw new NotFoundError('No such deal');
  return json(200, {
    id: deal.id,
    title: deal.title,
    opensAt: new Date(deal.opensAt).toISOString(),
    closesAt: new Date(deal.closesAt).toISOString(),
    limit: deal.limit,
    remaining: deal.limit - (issued ?? 0),
  });
});
