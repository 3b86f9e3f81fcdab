import { coupons } from '../coupons/kind';
import { orders } from '../orders/kind';
import * as z from '../platform/zod';

/** Every kind of reservation the pipeline carries, in the order the writer stores them. */
export const kinds = [orders, coupons] as const;

/**
 * One message on the reservation queue: the reservations made in the same moment, of any kind,
 * travel together to the writer, e.g. {"orders":[…],"coupons":[…]}.
 */
export const HandOffMessage = z
  .strictObject({
    orders: z._default(z.array(orders.record).check(z.maxLength(100)), []),
    coupons: z._default(z.array(coupons.record).check(z.maxLength(100)), []),
  })
  .check(z.refine((m) => m.orders.length + m.coupons.length > 0, 'a message carries at least one reservation'));
export type HandOffMessage = z.infer<typeof HandOffMessage>;
