import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import { DeleteMessageCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';

export interface Reinvoked {
  /** Records whose event the function took: deleted. */
  reinvoked: number;
  /** Records whose event failed again: kept, visible again once their receive's timeout passes. */
  failed: number;
  /** Records that are not Lambda's invocation record: kept, for a person to read. */
  unreadable: number;
  /** The first failures' errors, as the function answered them. */
  errors: string[];
}

export interface FailuresQueue {
  queueUrl: string;
  functionName: string;
  /** The function's timeout: a received record stays hidden past one invocation of it. */
  timeoutSeconds: number;
}

const SHOWN_ERRORS = 5;

/**
 * Invokes the function again with the event of every invocation record in its on-failure
 * destination (`requestPayload`: Lambda's record of an asynchronous invocation whose retries were
 * spent), one at a time and synchronously, and deletes each record once its invocation succeeded.
 * A record whose invocation fails again is kept, hidden until its receive's visibility timeout
 * passes, so one run tries each record once. Only for functions whose events may be processed
 * again (receive-mail files a message once, keyed by its SES message id).
 */
export async function reinvokeFailures(sqs: SQSClient, lambda: LambdaClient, { queueUrl, functionName, timeoutSeconds }: FailuresQueue): Promise<Reinvoked> {
  const outcome: Reinvoked = { reinvoked: 0, failed: 0, unreadable: 0, errors: [] };
  for (;;) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, VisibilityTimeout: 2 * timeoutSeconds + 60 }),
    );
    if (Messages.length === 0) return outcome;
    for (const message of Messages) {
      let event: unknown;
      try {
        event = (JSON.parse(message.Body ?? '') as { requestPayload?: unknown }).requestPayload;
      } catch {
        event = undefined;
      }
      if (event === undefined) {
        outcome.unreadable++;
        continue;
      }
      const answer = await lambda.send(
        new InvokeCommand({ FunctionName: functionName, InvocationType: 'RequestResponse', Payload: new TextEncoder().encode(JSON.stringify(event)) }),
      );
      // Lambda names the version that ran each synchronous invocation: an answer without one is
      // not Lambda's (an endpoint that answers anything, as the twin's emulator does), and deletes nothing.
      if (answer.ExecutedVersion === undefined) throw new Error(`${functionName} was not invoked: the answer (HTTP ${answer.StatusCode}) is not Lambda's`);
      if (answer.StatusCode !== 200 || answer.FunctionError) {
        outcome.failed++;
        if (outcome.errors.length < SHOWN_ERRORS)
          outcome.errors.push(answer.FunctionError ? new TextDecoder().decode(answer.Payload) : `HTTP ${answer.StatusCode}`);
        continue;
      }
      await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle! }));
      outcome.reinvoked++;
    }
  }
}
