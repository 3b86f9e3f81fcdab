import * as z from '../shared/platform/zod';
import { api } from '../shared/api/api';
import { html } from '../shared/platform/http/response';
import { ItemId } from '../shared/orders/model';
import { WAITING_PAGE_POLICY, waitingPage } from '../shared/rooms/page';

const Params = z.object({ itemId: ItemId });

/** An item's waiting page: it polls the buyer's place from the browser, and holds everything it needs inline. */
export const handler = api({ access: 'public', params: Params, answers: { 200: z.string() }, answerMedia: 'text/html', errors: [] }).handler(async ({ input }) =>
  html(200, waitingPage(input.params.itemId), { headers: { 'cache-control': 'no-store', 'content-security-policy': WAITING_PAGE_POLICY } }),
);
