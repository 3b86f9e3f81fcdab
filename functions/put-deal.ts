import * as z from '../shared/platform/zod';
import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { putDeal } from '../shared/coupons/deals';
import { DealId } from '../shared/coupons/model';

const Params = z.object({ dealId: DealId });
/** What MySQL's TIMESTAMP holds; a date outside it is refused here, before anything is written. */
const Instant = z
  .pipe(
    z.iso.datetime({ offset: true }),
    z.transform((s) => Date.parse(s)),
  )
  .check(z.refine((ms) => ms >= Date.UTC(1970, 0, 2) && ms < Date.UTC(2038, 0, 1), 'must fall between 1970-01-02 and 2037-12-31'));
const DealInput = z
  .strictObject({
    title: z.string().check(z.trim(), z.minLength(1), z.maxLength(200)),
    opensAt: Instant,
    closesAt: Instant,
    limit: z.int().check(z.minimum(1), z.maximum(10_000_000)),
  })
  .check(z.refine((d) => d.opensAt < d.closesAt, { message: 'closesAt must be after opensAt', path: ['closesAt'] }));
const Deal = z.strictObject({ id: DealId, title: z.string(), opensAt: z.iso.datetime(), closesAt: z.iso.datetime(), limit: z.int() });

export const handler = api({ access: 'admin', params: Params, body: DealInput, answers: { 200: Deal }, errors: ['CONFLICT'] }).handler(async ({ input }) => {
  const { dealId } = input.params;
  const { title, opensAt, closesAt, limit } = input.body;
  await putDeal({ id: dealId, title, opensAt, closesAt, limit });
  return json(200, { id: dealId, title, opensAt: new Date(opensAt).toISOString(), closesAt: new Date(closesAt).toISOString(), limit });
});
