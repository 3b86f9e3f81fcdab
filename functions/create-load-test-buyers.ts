import * as z from '../shared/platform/zod';
import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { createLoadTestBuyers, MAX_BUYERS_PER_REQUEST } from '../shared/sessions/load-test-buyers';

const Buyers = z.strictObject({ count: z.int().check(z.minimum(1), z.maximum(MAX_BUYERS_PER_REQUEST)) });
/** Each buyer with the Cookie header that signs it in, e.g. `sid=42.<session id>`. */
const Created = z.strictObject({ buyers: z.array(z.strictObject({ userId: z.int(), cookie: z.string() })) });

/**
 * Prepares a load test: `count` new buyers, each signed in, so the run measures the sale and not
 * sign-in. Deployed only where load tests are allowed (the table's loadTest): never in prod.
 */
export const handler = api({ access: 'admin', body: Buyers, answers: { 201: Created }, errors: [] }).handler(async ({ input }) => {
  const buyers = await createLoadTestBuyers(input.body.count);
  return json(201, { buyers });
});
