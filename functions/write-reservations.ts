import middy from '@middy/core';
import { storeCredentials } from '../shared/clients/credentials';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { writeCoupons } from '../shared/coupons/writer';
import { HandOffMessage } from '../shared/handoff/message';
import { logger } from '../shared/logger';
import type { CouponRecord } from '../shared/coupons/model';
import type { OrderRecord } from '../shared/orders/model';
import { writeOrders } from '../shared/orders/writer';

/**
 * The reservation queue's consumer: stores the orders and coupons reserved in Redis. Each record
 * carries one or more; all of a batch's are written together. A malformed record fails alone (and
 * reaches the DLQ after its receives run out) without holding back the rest of its batch; a record
 * with a reservation that could not be written is retried whole, and its siblings already written
 * are then dropped as no longer pending.
 */
export const handler = middy<SQSEvent, SQSBatchResponse>()
  .use(storeCredentials())
  .handler(async (event) => {
  const failures = new Set<string>();
  const messagesOf = new Map<string, string[]>();
  const orders: OrderRecord[] = [];
  const coupons: CouponRecord[] = [];
  const carriedBy = (id: string, messageId: string) => messagesOf.set(id, [...(messagesOf.get(id) ?? []), messageId]);

  for (const record of event.Records) {
    let parsed: ReturnType<typeof HandOffMessage.safeParse>;
    try {
      parsed = HandOffMessage.safeParse(JSON.parse(record.body));
    } catch {
      parsed = HandOffMessage.safeParse(undefined);
    }
    if (!parsed.success) {
      logger.error('Malformed hand-off message', { messageId: record.messageId, issues: parsed.error.issues.length });
      failures.add(record.messageId);
      continue;
    }
    for (const order of parsed.data.orders) {
      orders.push(order);
      carriedBy(order.orderId, record.messageId);
    }
    for (const coupon of parsed.data.coupons) {
      coupons.push(coupon);
      carriedBy(coupon.couponId, record.messageId);
    }
  }
  const failed = await Promise.all([writeOrders(orders), writeCoupons(coupons)]);
  for (const id of failed.flatMap((set) => [...set])) for (const messageId of messagesOf.get(id)!) failures.add(messageId);
  return { batchItemFailures: [...failures].map((itemIdentifier) => ({ itemIdentifier })) };
});
