import { upsertItemStock } from './items';
import { saleStarted } from './codes';
import { openSale, saleHasReservations } from './sale';

/**
 * Opens an item's sale: MySQL records the initial stock first, then Redis gets the live counter.
 * Pending reservations live only in Redis, so they are checked before MySQL is touched.
 */
export async function openItemSale(itemId: string, stock: { quantity: number; perUserLimit: number; buckets: number }): Promise<void> {
  const { quantity, perUserLimit, buckets } = stock;
  if (await saleHasReservations(itemId, buckets)) throw saleStarted();
  if (!(await upsertItemStock(itemId, quantity, perUserLimit, buckets))) {
    throw saleStarted();
  }
  await openSale(itemId, quantity, perUserLimit, buckets);
}
