import type { AwsCredentialIdentityProvider } from '@smithy/types';
import { createSignedRequester, isRetryableStatus, readBody, Retryable, serviceLocation, withRetries } from './aws-http';

/**
 * Secrets Manager's GetSecretValue, the one call a function makes to it: at cold start, for the
 * credentials of its data stores, over the VPC's interface endpoint (whose private DNS answers
 * for the regional name), and again after an authentication failure, when the secret rotated.
 */

/** Secrets Manager refused the lookup (missing secret, no permission) or kept failing. */
export class SecretLookupFailed extends Error {
  override name = 'SecretLookupFailed';
}

export interface SecretReaderOptions {
  region: string;
  /** An AWS-compatible endpoint (the twin's emulator); the regional endpoint otherwise. */
  endpoint?: string;
  credentials?: AwsCredentialIdentityProvider;
  maxAttempts?: number;
}

const MAX_SECRET_BYTES = 128 * 1024;
/** Errors Secrets Manager reports with a 4xx that a later attempt can get past. */
const RETRYABLE_TYPES = new Set(['ThrottlingException', 'TooManyRequestsException', 'RequestLimitExceeded', 'InternalServiceError']);

export function createSecretReader(options: SecretReaderOptions) {
  const send = createSignedRequester({
    service: 'secretsmanager',
    region: options.region,
    ...(options.credentials ? { credentials: options.credentials } : {}),
    uriEscapePath: true,
    // Well under any function's timeout: a cold start that cannot reach the endpoint fails fast, retry-safe.
    timeoutMs: 2_000,
  });
  const location = serviceLocation('secretsmanager', options.region, options.endpoint);
  const tooLarge = () => new SecretLookupFailed('The secret is larger than a secret can be');

  async function once(secretId: string): Promise<string> {
    let response;
    try {
      response = await send(location, {
        method: 'POST',
        headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'secretsmanager.GetSecretValue' },
        body: JSON.stringify({ SecretId: secretId }),
      });
    } catch (error) {
      throw new Retryable(error);
    }
    const status = response.statusCode ?? 0;
    const body = await readBody(response, MAX_SECRET_BYTES, tooLarge).catch((error: unknown) => {
      throw error instanceof SecretLookupFailed ? error : new Retryable(error);
    });
    let answer: { SecretString?: unknown; __type?: string };
    try {
      answer = JSON.parse(body.toString('utf8') || '{}');
    } catch {
      // A proxy's or load balancer's error page, not Secrets Manager's answer.
      throw new Retryable(new SecretLookupFailed(`Secrets Manager answered ${status} with a body that is not JSON`));
    }
    if (status === 200 && typeof answer.SecretString === 'string') return answer.SecretString;
    const type =
      String(answer.__type ?? '')
        .split('#')
        .pop() ?? '';
    const failure = new SecretLookupFailed(`Secrets Manager answered ${status} ${type}`.trim());
    // Throttling comes as a 400: a burst of cold starts in a flash crowd is exactly when it does.
    throw isRetryableStatus(status) || RETRYABLE_TYPES.has(type) ? new Retryable(failure) : failure;
  }

  return (secretId: string): Promise<string> => withRetries(options.maxAttempts ?? 3, () => once(secretId));
}
