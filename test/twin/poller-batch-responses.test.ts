import type { Message } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { failedMessageIds, toSqsEvent } from '../../infra/twin/events/poller';
import { fixture } from '../support/events';

const messages: Message[] = [
  {
    MessageId: 'a',
    ReceiptHandle: 'ra',
    Body: '{"n":1}',
    MD5OfBody: 'x',
    Attributes: { ApproximateReceiveCount: '1', SentTimestamp: '1', SenderId: 's', ApproximateFirstReceiveTimestamp: '2' },
  },
  { MessageId: 'b', ReceiptHandle: 'rb', Body: '{"n":2}', MD5OfBody: 'y', MessageAttributes: { kind: { DataType: 'String', StringValue: 'order' } } },
];

describe('partial batch responses, read as Lambda reads them', () => {
  it.each([
    ['nothing returned', undefined, []],
    ['an empty list', { batchItemFailures: [] }, []],
    ['one named failure', { batchItemFailures: [{ itemIdentifier: 'b' }] }, ['b']],
    ['an unknown identifier', { batchItemFailures: [{ itemIdentifier: 'zzz' }] }, ['a', 'b']],
    ['an empty identifier', { batchItemFailures: [{ itemIdentifier: '' }] }, ['a', 'b']],
    ['a null identifier', { batchItemFailures: [{ itemIdentifier: null }] }, ['a', 'b']],
  ])('%s', (_, result, failed) => {
    expect([...failedMessageIds(result, messages)].sort()).toEqual(failed);
  });
});

describe('SQS events', () => {
  it('are shaped like the ones Lambda sends', () => {
    const event = toSqsEvent(messages, 'arn:aws:sqs:us-east-1:000000000000:q', 'us-east-1');
    const recorded = fixture<SQSEvent>('sqs/two-records.json');

    expect(Object.keys(event.Records[0]!).sort()).toEqual(Object.keys(recorded.Records[0]!).sort());
    expect(Object.keys(event.Records[0]!.attributes).sort()).toEqual(Object.keys(recorded.Records[0]!.attributes).sort());
    expect(event.Records[1]!.messageAttributes).toEqual(recorded.Records[1]!.messageAttributes);
    expect(event.Records[0]).toMatchObject({ messageId: 'a', receiptHandle: 'ra', body: '{"n":1}', eventSource: 'aws:sqs' });
  });
});
