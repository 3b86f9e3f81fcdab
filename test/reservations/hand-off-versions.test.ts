/**
 * The hand-off's schema version (shared/reservations/hand-off.ts) while a deploy shifts: old and new
 * senders fill one queue, old and new writers drain it. This release's writer reads its own version
 * and the one before; a version it does not know is parked in the dead-letter queue with its reason,
 * neither read nor dropped; what this release sends, the release before (which reads every body as
 * version 1 and knows no attribute) reads too.
 */
import { ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as writeReservations } from '../../functions/write-reservations';
import { kinds } from '../../shared/sale/kinds';
import { upsertItemStock } from '../../shared/sale/orders/items';
import { openSale, reserve } from '../../shared/sale/orders/sale';
import type { OrderRecord } from '../../shared/sale/orders/model';
import { decodeHandOffs, encodeHandOffs, handOffMessage, HAND_OFF_VERSION, VERSION_ATTRIBUTE } from '../../shared/reservations/hand-off';
import { PARKED_REASON_ATTRIBUTE } from '../../shared/reservations/parked';
import { reservationQueue } from '../../shared/reservations/queue';
import { LOCAL_SOURCE } from '../../infra/twin/load-test-sources';
import { fixture, lambdaContext } from '../support/events';
import { orderRows, uniqueItemId } from '../support/orders';
import { queueWithDeadLetters, testSqs } from '../support/queues';

const sqs = testSqs();
let queue: Awaited<ReturnType<typeof queueWithDeadLetters>>;
const saved = { queue: process.env.RESERVATION_QUEUE_URL, dlq: process.env.RESERVATION_DLQ_URL };

beforeAll(async () => {
  // The file's own queue and dead-letter queue: the sender and the writer read these on first use.
  queue = await queueWithDeadLetters(sqs, 5, 30);
  process.env.RESERVATION_QUEUE_URL = queue.url;
  process.env.RESERVATION_DLQ_URL = queue.dlqUrl;
});
afterAll(() => {
  process.env.RESERVATION_QUEUE_URL = saved.queue;
  process.env.RESERVATION_DLQ_URL = saved.dlq;
});

async function reservedOrder(): Promise<{ itemId: string; order: OrderRecord }> {
  const itemId = uniqueItemId('versions');
  await upsertItemStock(itemId, 5, 5);
  await openSale(itemId, 5, 5);
  const { record } = await reserve({ itemId, userId: 4_100, quantity: 1, idempotencyKey: 'v', source: LOCAL_SOURCE });
  return { itemId, order: record };
}

/** Every message on a queue now, as SQS hands it over (body and attributes); fauxqs delivers what is there in one or two receives. */
async function receiveAll(url: string, expected: number): Promise<Message[]> {
  const messages: Message[] = [];
  for (let attempt = 0; attempt < 20 && messages.length < expected; attempt++) {
    const { Messages } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, MessageAttributeNames: ['All'], WaitTimeSeconds: 1 }),
    );
    messages.push(...(Messages ?? []));
  }
  return messages;
}

/** A received message as the event source mapping hands it to the writer. */
function recordOf(message: Message): SQSRecord {
  const template = fixture<SQSEvent>('sqs/order-records.json').Records[0]!;
  const attributes = Object.fromEntries(
    Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [name, { dataType: value.DataType!, stringValue: value.StringValue! }]),
  );
  return { ...template, messageId: message.MessageId!, body: message.Body!, messageAttributes: attributes };
}

function recordWithVersion(body: string, version: string | undefined, messageId: string): SQSRecord {
  const template = fixture<SQSEvent>('sqs/order-records.json').Records[0]!;
  return {
    ...template,
    messageId,
    body,
    messageAttributes: version === undefined ? {} : { [VERSION_ATTRIBUTE]: { dataType: 'Number', stringValue: version } },
  };
}

describe('the hand-off version', () => {
  it('is sent with every message: what this release sends, this writer stores and the release before reads', async () => {
    // Prepare
    const { itemId, order } = await reservedOrder();

    // Act: sent by this release's sender, received as the mapping receives it, written by this release's writer.
    await reservationQueue().send({ kind: 'orders', record: order });
    const [sent] = await receiveAll(queue.url, 1);
    const result = await writeReservations({ Records: [recordOf(sent!)] }, lambdaContext());

    // Assess: the version is on the message; the body is one the release before reads (the same
    // schema, no attribute looked at); the order is stored.
    expect(sent!.MessageAttributes?.[VERSION_ATTRIBUTE]?.StringValue).toBe(String(HAND_OFF_VERSION));
    expect(decodeHandOffs(handOffMessage(kinds), sent!.Body!).success).toBe(true);
    expect(result.batchItemFailures).toEqual([]);
    expect((await orderRows(itemId)).map((row) => row.status)).toEqual(['confirmed']);
  });

  it('of the release before (no attribute) is read: an old sender’s message is stored by this writer', async () => {
    // Prepare
    const { itemId, order } = await reservedOrder();

    // Act
    const result = await writeReservations(
      { Records: [recordWithVersion(encodeHandOffs([{ kind: 'orders', record: order }]), undefined, 'old-1')] },
      lambdaContext(),
    );

    // Assess
    expect(result.batchItemFailures).toEqual([]);
    expect((await orderRows(itemId)).map((row) => row.status)).toEqual(['confirmed']);
  });

  it('that this writer does not read is parked in the dead-letter queue with its reason, not stored and not dropped', async () => {
    // Prepare: a later release's message, and one whose version is not a number, beside one it reads.
    const { itemId, order } = await reservedOrder();
    const { itemId: readItem, order: readOrder } = await reservedOrder();
    const body = encodeHandOffs([{ kind: 'orders', record: order }]);
    const records = [
      recordWithVersion(body, String(HAND_OFF_VERSION + 1), 'next-1'),
      recordWithVersion(body, 'two', 'garbled-1'),
      recordWithVersion(encodeHandOffs([{ kind: 'orders', record: readOrder }]), String(HAND_OFF_VERSION), 'this-1'),
    ];

    // Act
    const result = await writeReservations({ Records: records }, lambdaContext());

    // Assess: nothing retried (the parked ones are off the queue), nothing of theirs stored, both
    // in the DLQ as they came with why; the message it reads stored beside them.
    expect(result.batchItemFailures).toEqual([]);
    expect(await orderRows(itemId)).toEqual([]);
    expect((await orderRows(readItem)).map((row) => row.status)).toEqual(['confirmed']);
    const parked = await receiveAll(queue.dlqUrl, 2);
    expect(parked.map((m) => m.Body)).toEqual([body, body]);
    expect(parked.map((m) => m.MessageAttributes?.[VERSION_ATTRIBUTE]?.StringValue).sort()).toEqual([String(HAND_OFF_VERSION + 1), 'two'].sort());
    for (const message of parked) expect(message.MessageAttributes?.[PARKED_REASON_ATTRIBUTE]?.StringValue).toMatch(/is not one this writer reads \(1, 2\)/);
  });

  it('that this writer does not read stays on its queue when it cannot be parked', async () => {
    // Prepare: the dead-letter queue unreachable.
    const { itemId, order } = await reservedOrder();
    process.env.RESERVATION_DLQ_URL = `${queue.dlqUrl}-missing`;
    try {
      // Act
      const result = await writeReservations(
        { Records: [recordWithVersion(encodeHandOffs([{ kind: 'orders', record: order }]), String(HAND_OFF_VERSION + 1), 'next-2')] },
        lambdaContext(),
      );

      // Assess: a batch item failure, so SQS delivers it again; nothing stored.
      expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'next-2' }]);
      expect(await orderRows(itemId)).toEqual([]);
    } finally {
      process.env.RESERVATION_DLQ_URL = queue.dlqUrl;
    }
  });
});
