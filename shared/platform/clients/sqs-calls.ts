import type { AwsCredentialIdentityProvider } from '@smithy/types';
import { awsEnv, readEnv } from '../config';
import { once } from '../once';
import { awsClientOptions } from './aws';
import { createSignedRequester, DeadlinePassed, isRetryableStatus, readBody, Retryable, serviceLocation, withRetries } from './aws-http';

/**
 * SQS's JSON protocol, the one the SDK's SQS client speaks, for the two calls the request path
 * makes: SendMessageBatch (an order's or a coupon's hand-off) and GetQueueAttributes (health).
 * Signed by the SDK's own signer (aws-http.ts). The SDK's client would add ~180 KB and ~50 ms of
 * evaluation to the cold start of every function that hands off (`npm run bundles`), and its
 * middleware stack to every send; the writer and the operators' tools, off the request path, keep it.
 */

/** SQS refused the call, or kept failing until the attempts ran out. */
export class SqsCallFailed extends Error {
  override name = 'SqsCallFailed';
  constructor(
    /** SQS's error type (`__type` without its namespace), e.g. QueueDoesNotExist. */
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

/** Errors SQS reports with a 4xx that a later attempt can get past. */
const RETRYABLE_TYPES = new Set(['RequestThrottled', 'ThrottlingException', 'KmsThrottled']);
/** A SendMessageBatch answer names at most ten entries; anything this large is not SQS's. */
const MAX_ANSWER_BYTES = 1024 * 1024;

export interface SqsCallerOptions {
  region: string;
  /** An AWS-compatible endpoint (the twin's emulator); the regional endpoint otherwise. */
  endpoint?: string;
  credentials?: AwsCredentialIdentityProvider;
  /** As the SDK counts them: the first attempt included. */
  maxAttempts: number;
}

/** One SQS action; given a deadline (ms since the epoch), it fails at it, retries included. */
export type SqsCall = <T>(action: string, input: object, deadline?: number) => Promise<T>;

export function createSqsCaller(options: SqsCallerOptions): SqsCall {
  const send = createSignedRequester({
    service: 'sqs',
    region: options.region,
    ...(options.credentials ? { credentials: options.credentials } : {}),
    uriEscapePath: true,
  });
  const location = serviceLocation('sqs', options.region, options.endpoint);
  const tooLarge = () => new SqsCallFailed('AnswerTooLarge', 'SQS answered with more than an answer can hold');
  // Past its caller's deadline a call is not tried again: the caller has given up on it already.
  const retryable = (error: unknown, deadline?: number) =>
    (deadline !== undefined && Date.now() >= deadline) || error instanceof SqsCallFailed || error instanceof DeadlinePassed ? error : new Retryable(error);

  return async function call<T>(action: string, input: object, deadline?: number): Promise<T> {
    const body = JSON.stringify(input);
    return withRetries(options.maxAttempts, async () => {
      const response = await send(location, {
        method: 'POST',
        headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': `AmazonSQS.${action}` },
        body,
        ...(deadline !== undefined ? { deadline } : {}),
      }).catch((error: unknown) => {
        throw retryable(error, deadline);
      });
      const status = response.statusCode ?? 0;
      const text = (
        await readBody(response, MAX_ANSWER_BYTES, tooLarge).catch((error: unknown) => {
          throw retryable(error, deadline);
        })
      ).toString('utf8');
      let answer: { __type?: unknown; message?: unknown; Message?: unknown };
      try {
        answer = JSON.parse(text || '{}');
      } catch {
        // A proxy's or load balancer's error page, not SQS's answer.
        throw new Retryable(new SqsCallFailed('NotJson', `SQS answered ${status} with a body that is not JSON`));
      }
      if (status >= 200 && status < 300) return answer as T;
      const type =
        String(answer.__type ?? '')
          .split('#')
          .pop() || `HTTP${status}`;
      const failure = new SqsCallFailed(type, `${type}: ${String(answer.message ?? answer.Message ?? '')}`);
      if (isRetryableStatus(status) || RETRYABLE_TYPES.has(type)) throw new Retryable(failure);
      throw failure;
    });
  };
}

/** The instance's caller: the endpoint the twin gives for SQS, as the SDK's client is given it (clients/sqs.ts). */
export const sqsCall = once(() => {
  const { AWS_ENDPOINT_URL_SQS } = readEnv(awsEnv);
  const { region, endpoint } = awsClientOptions();
  const serviceEndpoint = AWS_ENDPOINT_URL_SQS ?? endpoint;
  return createSqsCaller({ region, ...(serviceEndpoint ? { endpoint: serviceEndpoint } : {}), maxAttempts: 2 });
});
