import type { ReservationKind } from '../../reservations/kind';
import { db } from '../../platform/clients/mysql';
import { findItem } from '../orders/items';
import { orders } from '../orders/kind';
import type { OrderRecord } from '../orders/model';
import { repairRoom } from './admin';
import { storedRoom } from './stored';

/**
 * Orders as the writer and reconciliation repair them: a sale Redis lost is rebuilt behind its
 * waiting room from the first moment back (the mark comes with the units, never open), and what
 * Redis lost of the room itself is mended from MySQL after (repairRoom). Here, above
 * shared/sale/orders/, which the rooms stand on and so cannot name them (shared/sale/kinds.ts hands
 * this to the pipeline).
 */
export const ordersBehindRooms: ReservationKind<OrderRecord, Parameters<typeof orders.store>[2]> = {
  ...orders,

  async rebuiltState(conn, itemId, remaining) {
    const state = await orders.rebuiltState(conn, itemId, remaining);
    return state && (await storedRoom(conn, itemId)) ? { ...state, room: 1 } : state;
  },

  async repairAttached(itemId, buckets, confirmed) {
    // An item without a room costs the repair one read of waiting_rooms, and nothing more.
    if (!(await storedRoom(db(), itemId))) return false;
    const limit = (await findItem(itemId))?.perUserLimit ?? Number.POSITIVE_INFINITY;
    return repairRoom(
      itemId,
      buckets,
      confirmed.filter((c) => c.units >= limit).map((c) => c.buyer),
    );
  },
};
