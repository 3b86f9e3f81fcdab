import type { AwsCredentialIdentityProvider } from '@smithy/types';
import { createSignedRequester, isRetryableStatus, readBody, Retryable, serviceLocation, withRetries, type AwsLocation } from './aws-http';

/**
 * GET of one S3 object, signed by the SDK's own SigV4 signer: the only S3 call a function makes
 * (receive-mail reading what SES stored). The full S3 client would add about 300 KB to that
 * bundle and ~35 ms to its cold start for this one operation.
 */

/** The object does not exist (404). */
export class ObjectMissing extends Error {
  override name = 'ObjectMissing';
}

/** The object is larger than the caller accepts; `bytes` is its size when S3 said so up front. */
export class ObjectTooLarge extends Error {
  override name = 'ObjectTooLarge';
  constructor(
    readonly maxBytes: number,
    readonly bytes?: number,
  ) {
    super(bytes === undefined ? `The object has over ${maxBytes} bytes` : `The object has ${bytes} bytes; at most ${maxBytes} are accepted`);
  }
}

/** Any other answer than 200 or 404, after retries for those worth retrying. */
export class S3RequestFailed extends Error {
  override name = 'S3RequestFailed';
  constructor(
    readonly status: number,
    readonly code: string,
  ) {
    super(`S3 answered ${status} ${code}`);
  }
}

/** RFC 3986 encoding of each path segment, as SigV4 expects for S3 keys (which it does not re-encode). */
const encodeKey = (key: string) =>
  key
    .split('/')
    .map((segment) => encodeURIComponent(segment).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`))
    .join('/');

export interface ObjectReaderOptions {
  region: string;
  /** An S3-compatible endpoint (the twin's emulator), addressed path-style; AWS otherwise. */
  endpoint?: string;
  credentials?: AwsCredentialIdentityProvider;
  maxAttempts?: number;
}

export type ObjectLocation = AwsLocation;

export function objectLocation(bucket: string, key: string, { region, endpoint }: Pick<ObjectReaderOptions, 'region' | 'endpoint'>): ObjectLocation {
  if (!endpoint && !bucket.includes('.')) {
    const { hostname, ...rest } = serviceLocation('s3', region, undefined, `/${encodeKey(key)}`);
    return { ...rest, hostname: `${bucket}.${hostname}` };
  }
  // Path-style for the emulator, and for a bucket name with dots, which breaks the wildcard certificate of a virtual-hosted address.
  return serviceLocation('s3', region, endpoint, `/${bucket}/${encodeKey(key)}`);
}

/**
 * Reads objects, retrying 5xx, throttling and network failures with jittered backoff. A body is
 * never read past `maxBytes`.
 */
export function createObjectReader(options: ObjectReaderOptions) {
  const send = createSignedRequester({
    service: 's3',
    region: options.region,
    ...(options.credentials ? { credentials: options.credentials } : {}),
    uriEscapePath: false,
  });
  const maxAttempts = options.maxAttempts ?? 3;
  const tooLarge = (maxBytes: number) => (declared?: number) => new ObjectTooLarge(maxBytes, declared);

  /** One request and its whole body; what is worth another try is thrown as Retryable. */
  async function once(location: ObjectLocation, key: string, maxBytes: number): Promise<Buffer> {
    let response;
    try {
      response = await send(location, { method: 'GET' });
    } catch (error) {
      throw new Retryable(error);
    }
    const status = response.statusCode ?? 0;
    if (status === 200) {
      return readBody(response, maxBytes, tooLarge(maxBytes)).catch((error: unknown) => {
        throw error instanceof ObjectTooLarge ? error : new Retryable(error);
      });
    }
    const code = errorCode(await readBody(response, 64 * 1024, tooLarge(64 * 1024)).catch(() => Buffer.alloc(0)));
    // Only a missing key is a missing object; a missing bucket is a misconfiguration to fail loudly on.
    if (status === 404 && code === 'NoSuchKey') throw new ObjectMissing(`No object at ${key}`);
    const failure = new S3RequestFailed(status, code);
    throw isRetryableStatus(status) ? new Retryable(failure) : failure;
  }

  return function getObject(bucket: string, key: string, maxBytes: number): Promise<Buffer> {
    const location = objectLocation(bucket, key, options);
    return withRetries(maxAttempts, () => once(location, key, maxBytes));
  };
}

/** S3's error document names the error in <Code>; the rest is for people. */
const errorCode = (body: Buffer) => /<Code>([^<]{1,100})<\/Code>/.exec(body.toString('utf8'))?.[1] ?? 'Unknown';
