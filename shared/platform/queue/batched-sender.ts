import type { SqsCall } from '../clients/sqs-calls';

/** A message attribute as SQS takes it. */
export interface MessageAttributeValue {
  DataType: string;
  StringValue?: string;
}

/** SendMessageBatch's answer: which entries SQS took, and why it refused the others. */
interface SendMessageBatchAnswer {
  Successful?: { Id: string }[];
  Failed?: { Id: string; Code: string; Message?: string }[];
}

/** SQS takes at most 10 messages per SendMessageBatch. */
const ENTRIES_PER_CALL = 10;

export class QueueSendError extends Error {
  override name = 'QueueSendError';
}

interface Pending<T> {
  item: T;
  resolve(): void;
  reject(error: Error): void;
}

export interface BatchedSenderOptions<T> {
  queueUrl: string;
  /** A send with no answer within this is failed, and its callers compensate. */
  timeoutMs: number;
  /** Items packed into one message at most. */
  itemsPerMessage: number;
  /** The body of one message carrying these items. */
  encode(items: T[]): string;
  /** The message attributes of one message carrying these items, if any. */
  attributes?(items: T[]): Record<string, MessageAttributeValue> | undefined;
  /**
   * Each item in a call of its own, sent at once: what an instance of Lambda's default compute,
   * which serves one invocation at a time, sends for an invocation that sends one item (an order,
   * a coupon). For the twin, whose one instance serves many invocations and would otherwise
   * coalesce theirs, to measure that shape; the stack runs the reserving functions on Managed
   * Instances, whose environments coalesce the sends of the invocations each runs at once. (The
   * relay, which sends many in one invocation, coalesces them on Lambda; with this it sends each
   * alone.)
   */
  alone?: boolean;
}

/**
 * Takes one item at a time from each caller, but coalesces every item sent in the same turn of
 * the event loop: up to itemsPerMessage items per message, up to ten messages per
 * SendMessageBatch call. A lone request (an instance of Lambda's default compute) sends one item in
 * one call with no added wait; a process serving many requests at once (the twin, an environment
 * of Lambda Managed Instances) makes a fraction of the calls, and its consumer receives and deletes as many fewer
 * messages (unless `alone`). Each caller learns the fate of the message that carried its item.
 */
export class BatchedSender<T> {
  private pending: Pending<T>[] = [];
  private scheduled = false;

  constructor(
    private readonly call: SqsCall,
    private readonly options: BatchedSenderOptions<T>,
  ) {}

  send(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.options.alone) return void this.sendCall([[{ item, resolve, reject }]]);
      this.pending.push({ item, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    const waiting = this.pending;
    this.pending = [];
    this.scheduled = false;
    const messages: Pending<T>[][] = [];
    for (let i = 0; i < waiting.length; i += this.options.itemsPerMessage) messages.push(waiting.slice(i, i + this.options.itemsPerMessage));
    for (let i = 0; i < messages.length; i += ENTRIES_PER_CALL) void this.sendCall(messages.slice(i, i + ENTRIES_PER_CALL));
  }

  private async sendCall(messages: Pending<T>[][]): Promise<void> {
    const settle = (message: Pending<T>[], error?: Error) => {
      for (const p of message) {
        if (error) p.reject(error);
        else p.resolve();
      }
    };
    try {
      const result = await this.call<SendMessageBatchAnswer>(
        'SendMessageBatch',
        {
          QueueUrl: this.options.queueUrl,
          Entries: messages.map((message, i) => {
            const items = message.map((p) => p.item);
            const attributes = this.options.attributes?.(items);
            return { Id: String(i), MessageBody: this.options.encode(items), ...(attributes ? { MessageAttributes: attributes } : {}) };
          }),
        },
        Date.now() + this.options.timeoutMs,
      );
      const sent = new Set(result.Successful?.map((s) => s.Id));
      const failed = new Map(result.Failed?.map((f) => [f.Id, f]));
      messages.forEach((message, i) => {
        const id = String(i);
        if (sent.has(id)) return settle(message);
        const failure = failed.get(id);
        settle(message, new QueueSendError(failure ? `${failure.Code}: ${failure.Message ?? ''}` : 'The queue gave no answer for this message'));
      });
    } catch (error) {
      for (const message of messages) settle(message, error as Error);
    }
  }
}
