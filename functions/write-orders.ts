import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { logger } from '../shared/logger';
import { OrderMessage, type OrderRecord } from '../shared/orders/model';
import { writeOrders } from '../shared/orders/writer';

/**
 * The order queue's consumer. Each record carries one or more orders; all of a batch's orders are
 * written together. A malformed record fails alone (and reaches the DLQ after its receives run
 * out) without holding back the rest of its batch; a record whose order could not be written is
 * retried whole, and its siblings already written are then dropped as no longer pending.
 */
export const handler = middy<SQSEvent, SQSBatchResponse>().handler(async (event) => {
  const failures = new Set<string>();
  const messagesOf = new Map<string, string[]>();
  const orders: OrderRecord[] = [];
  for (const record of event.Records) {
    let parsed: ReturnType<typeof OrderMessage.safeParse>;
    try {
      parsed = OrderMessage.safeParse(JSON.parse(record.body));
    } catch {
      parsed = OrderMessage.safeParse(undefined);
    }
    if (!parsed.success) {
      logger.error('Malformed order message', { messageId: record.messageId, issues: parsed.error.issues.length });
      failures.add(record.messageId);
      continue;
    }
    for (const order of parsed.data.orders) {
      orders.push(order);
      messagesOf.set(order.orderId, [...(messagesOf.get(order.orderId) ?? []), record.messageId]);
    }
  }
  const failedOrders = await writeOrders(orders);
  for (const orderId of failedOrders) for (const messageId of messagesOf.get(orderId)!) failures.add(messageId);
  return { batchItemFailures: [...failures].map((itemIdentifier) => ({ itemIdentifier })) };
});
