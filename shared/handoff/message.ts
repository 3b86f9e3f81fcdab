import * as z from '../zod';
import { CouponRecord } from '../coupons/model';
import { OrderRecord } from '../orders/model';

/**
 * One message on the reservation queue: the orders and coupons reserved in Redis in the same
 * moment travel together to the writer, which stores them in MySQL.
 */
export const HandOffMessage = z
  .strictObject({
    orders: z._default(z.array(OrderRecord).check(z.maxLength(100)), []),
    coupons: z._default(z.array(CouponRecord).check(z.maxLength(100)), []),
  })
  .check(z.refine((m) => m.orders.length + m.coupons.length > 0, 'a message carries at least one reservation'));
export type HandOffMessage = z.infer<typeof HandOffMessage>;

export type HandOff = { order: OrderRecord } | { coupon: CouponRecord };

export function encodeHandOffs(items: HandOff[]): string {
  const orders: OrderRecord[] = [];
  const coupons: CouponRecord[] = [];
  for (const item of items) {
    if ('order' in item) orders.push(item.order);
    else coupons.push(item.coupon);
  }
  return JSON.stringify({ ...(orders.length ? { orders } : {}), ...(coupons.length ? { coupons } : {}) });
}
