import { createHash, createHmac, type BinaryLike } from 'node:crypto';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { fromEnv } from '@aws-sdk/credential-provider-env';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentityProvider, Checksum, SourceData } from '@smithy/types';

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

const binary = (data: SourceData): BinaryLike =>
  typeof data === 'string' ? data : data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);

/** The signer's hash: SHA-256, or HMAC-SHA-256 when given a key. */
class Sha256 implements Checksum {
  private hash;
  constructor(private readonly secret?: SourceData) {
    this.hash = this.start();
  }
  private start() {
    return this.secret === undefined ? createHash('sha256') : createHmac('sha256', binary(this.secret));
  }
  update(data: Uint8Array): void {
    this.hash.update(data);
  }
  async digest(): Promise<Uint8Array> {
    return this.hash.digest();
  }
  reset(): void {
    this.hash = this.start();
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

export interface ObjectLocation {
  protocol: 'http:' | 'https:';
  hostname: string;
  port?: number;
  path: string;
}

export function objectLocation(bucket: string, key: string, { region, endpoint }: Pick<ObjectReaderOptions, 'region' | 'endpoint'>): ObjectLocation {
  if (!endpoint) {
    const host = `s3.${region}.${region.startsWith('cn-') ? 'amazonaws.com.cn' : 'amazonaws.com'}`;
    // A bucket name with dots breaks the wildcard certificate of a virtual-hosted address.
    return bucket.includes('.')
      ? { protocol: 'https:', hostname: host, path: `/${bucket}/${encodeKey(key)}` }
      : { protocol: 'https:', hostname: `${bucket}.${host}`, path: `/${encodeKey(key)}` };
  }
  const url = new URL(endpoint);
  return {
    protocol: url.protocol === 'http:' ? 'http:' : 'https:',
    hostname: url.hostname,
    ...(url.port ? { port: Number(url.port) } : {}),
    path: `${url.pathname.replace(/\/$/, '')}/${bucket}/${encodeKey(key)}`,
  };
}

const RETRYABLE = (status: number) => status >= 500 || status === 429;

/**
 * Reads objects with credentials from the environment (where Lambda puts the execution role's),
 * over kept-alive connections, retrying 5xx, throttling and network failures with jittered
 * backoff. A body is never read past `maxBytes`.
 */
export function createObjectReader(options: ObjectReaderOptions) {
  const signer = new SignatureV4({
    service: 's3',
    region: options.region,
    credentials: options.credentials ?? fromEnv(),
    sha256: Sha256,
    uriEscapePath: false,
    applyChecksum: true,
  });
  const agents = { 'http:': new HttpAgent({ keepAlive: true }), 'https:': new HttpsAgent({ keepAlive: true }) };
  const maxAttempts = options.maxAttempts ?? 3;

  async function attempt(location: ObjectLocation): Promise<IncomingMessage> {
    const host = location.port ? `${location.hostname}:${location.port}` : location.hostname;
    const signed = await signer.sign({ method: 'GET', ...location, headers: { host }, query: {} });
    const send = location.protocol === 'http:' ? httpRequest : httpsRequest;
    return new Promise((resolve, reject) => {
      send({ ...location, method: 'GET', headers: signed.headers, agent: agents[location.protocol], timeout: 10_000 }, resolve)
        .on('timeout', function (this: { destroy(error: Error): void }) {
          this.destroy(new Error('S3 did not answer within 10 s'));
        })
        .on('error', reject)
        .end();
    });
  }

  /** One request and its whole body; what is worth another try is thrown as Retryable. */
  async function once(location: ObjectLocation, key: string, maxBytes: number): Promise<Buffer> {
    let response: IncomingMessage;
    try {
      response = await attempt(location);
    } catch (error) {
      throw new Retryable(error);
    }
    const status = response.statusCode ?? 0;
    if (status === 200) {
      return readBody(response, maxBytes).catch((error: unknown) => {
        throw error instanceof ObjectTooLarge ? error : new Retryable(error);
      });
    }
    const code = errorCode(await readBody(response, 64 * 1024).catch(() => Buffer.alloc(0)));
    // Only a missing key is a missing object; a missing bucket is a misconfiguration to fail loudly on.
    if (status === 404 && code === 'NoSuchKey') throw new ObjectMissing(`No object at ${key}`);
    const failure = new S3RequestFailed(status, code);
    throw RETRYABLE(status) ? new Retryable(failure) : failure;
  }

  return async function getObject(bucket: string, key: string, maxBytes: number): Promise<Buffer> {
    const location = objectLocation(bucket, key, options);
    for (let tries = 1; ; tries++) {
      try {
        return await once(location, key, maxBytes);
      } catch (error) {
        if (!(error instanceof Retryable)) throw error;
        if (tries >= maxAttempts) throw error.cause;
        await backoff(tries);
      }
    }
  };
}

/** A failure worth another attempt: a 5xx or 429 answer, or a connection lost before or while reading. */
class Retryable extends Error {
  constructor(cause: unknown) {
    super('retryable', { cause });
  }
}

const backoff = (tries: number) => new Promise((resolve) => setTimeout(resolve, Math.random() * 100 * 2 ** tries));

/** S3's error document names the error in <Code>; the rest is for people. */
const errorCode = (body: Buffer) => /<Code>([^<]{1,100})<\/Code>/.exec(body.toString('utf8'))?.[1] ?? 'Unknown';

async function readBody(response: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(response.headers['content-length']);
  if (declared > maxBytes) {
    response.destroy();
    throw new ObjectTooLarge(maxBytes, declared);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      response.destroy();
      throw new ObjectTooLarge(maxBytes);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks, size);
}
