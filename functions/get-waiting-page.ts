import * as z from '../shared/platform/zod';
import { api } from '../shared/api/api';
import { html } from '../shared/platform/http/response';
import { ItemId } from '../shared/sale/orders/model';
import { noRoomPage, WAITING_PAGE_POLICY, waitingPage } from '../shared/sale/rooms/page';
import { hasRoom } from '../shared/sale/rooms/rooms';

const Params = z.object({ itemId: ItemId });
const PAGE = { headers: { 'cache-control': 'no-store', 'content-security-policy': WAITING_PAGE_POLICY } };

/** An item's waiting page: it polls the buyer's place from the browser, and holds everything it needs inline; an item without a room gets a page that says so. */
export const handler = api({ access: 'public', params: Params, answers: { 200: z.string(), 404: z.string() }, answerMedia: 'text/html', errors: [] }).handler(
  async ({ input }) => {
    const { itemId } = input.params;
    return (await hasRoom(itemId)) ? html(200, waitingPage(itemId), PAGE) : html(404, noRoomPage(itemId), PAGE);
  },
);
