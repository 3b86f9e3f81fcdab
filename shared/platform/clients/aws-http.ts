import { createHash, createHmac, type BinaryLike } from 'node:crypto';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider, Checksum, SourceData } from '@smithy/types';

/**
 * Requests to AWS signed by the SDK's own SigV4 signer, for the few single calls a function makes
 * outside the SQS client (an S3 GET, a Secrets Manager lookup): the full clients would add
 * hundreds of KB to each bundle and tens of ms to its cold start for one operation each.
 */

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

/**
 * The credentials Lambda puts in the environment for the execution role, read at each signing.
 * By hand rather than the SDK's fromEnv: that provider imports the SDK's client core (to tag the
 * credentials with a user-agent feature) and its config loader (for an error class), whose modules
 * and builtins (node:fs/promises, node:os) are parsed and loaded at every cold start: ~2.7 % of
 * a function's import, counted by callgrind, for three variables read.
 */
const credentialsFromEnvironment: AwsCredentialIdentityProvider = async (): Promise<AwsCredentialIdentity> => {
  const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey, AWS_SESSION_TOKEN: sessionToken } = process.env;
  if (!accessKeyId || !secretAccessKey) throw new Error('Unable to find environment variable credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY');
  return sessionToken ? { accessKeyId, secretAccessKey, sessionToken } : { accessKeyId, secretAccessKey };
};

export interface AwsLocation {
  protocol: 'http:' | 'https:';
  hostname: string;
  port?: number;
  path: string;
}

/** setTimeout's longest delay; a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A request still unanswered (or its answer still unread) at its caller's deadline, destroyed; named as AbortSignal.timeout's error is. */
export class DeadlinePassed extends Error {
  override name = 'TimeoutError';
}

export interface SignedRequesterOptions {
  service: string;
  region: string;
  credentials?: AwsCredentialIdentityProvider;
  /** S3 keys are signed as they are; other services sign the path encoded once more. */
  uriEscapePath: boolean;
  timeoutMs?: number;
}

/** Where a service is reached: AWS's regional endpoint, or an AWS-compatible one (the twin's emulator). */
export function serviceLocation(service: string, region: string, endpoint: string | undefined, path = '/'): AwsLocation {
  if (!endpoint) return { protocol: 'https:', hostname: `${service}.${region}.${region.startsWith('cn-') ? 'amazonaws.com.cn' : 'amazonaws.com'}`, path };
  const url = new URL(endpoint);
  return {
    protocol: url.protocol === 'http:' ? 'http:' : 'https:',
    hostname: url.hostname,
    ...(url.port ? { port: Number(url.port) } : {}),
    path: `${url.pathname.replace(/\/$/, '')}${path}`,
  };
}

/**
 * Sends signed requests with credentials from the environment (where Lambda puts the execution
 * role's), over kept-alive connections. A request that gets no answer in time fails; one given a
 * deadline (ms since the epoch) is destroyed at it, answer and all. A timer rather than an
 * AbortSignal handed to http.request: the signal's listeners and AbortSignal.timeout's own cost a
 * SendMessageBatch sent alone 0.03–0.04 ms of CPU (old and new alternated in one process:
 * 0.186 → 0.154 and 0.210 → 0.170 ms a call).
 */
export function createSignedRequester(options: SignedRequesterOptions) {
  const signer = new SignatureV4({
    service: options.service,
    region: options.region,
    credentials: options.credentials ?? credentialsFromEnvironment,
    sha256: Sha256,
    uriEscapePath: options.uriEscapePath,
    applyChecksum: true,
  });
  const agents = { 'http:': new HttpAgent({ keepAlive: true }), 'https:': new HttpsAgent({ keepAlive: true }) };
  const timeoutMs = options.timeoutMs ?? 10_000;

  return async function send(
    location: AwsLocation,
    request: { method: 'GET' | 'POST'; headers?: Record<string, string>; body?: string; deadline?: number },
  ): Promise<IncomingMessage> {
    const host = location.port ? `${location.hostname}:${location.port}` : location.hostname;
    const headers = { ...request.headers, host, ...(request.body !== undefined ? { 'content-length': String(Buffer.byteLength(request.body)) } : {}) };
    const signed = await signer.sign({
      method: request.method,
      ...location,
      headers,
      query: {},
      ...(request.body !== undefined ? { body: request.body } : {}),
    });
    const send = location.protocol === 'http:' ? httpRequest : httpsRequest;
    const left = request.deadline === undefined ? undefined : request.deadline - Date.now();
    if (left !== undefined && !(left > 0)) throw new DeadlinePassed(`${options.service} was not asked: the caller's deadline had passed`);
    return new Promise((resolve, reject) => {
      let answer: IncomingMessage | undefined;
      // Set on 'close', which comes once the answer has been read whole (or the request failed): nothing is left to time out.
      let closed = false;
      const req = send(
        {
          ...location,
          method: request.method,
          headers: signed.headers,
          agent: agents[location.protocol],
          timeout: timeoutMs,
        },
        (response) => {
          answer = response;
          resolve(response);
        },
      )
        .on('timeout', () => {
          // The socket's idle timer fires in the timers phase, before the poll phase reads what came
          // while the loop was held: only a socket that read nothing by the check phase after it is idle.
          const socket = req.socket;
          const bytesRead = socket?.bytesRead;
          setImmediate(() => {
            if (!closed && socket?.bytesRead === bytesRead) req.destroy(new Error(`${options.service} did not answer within ${timeoutMs} ms`));
          });
        })
        .on('error', reject);
      let deadline: ReturnType<typeof setTimeout> | undefined;
      req.once('close', () => {
        closed = true;
        clearTimeout(deadline);
      });
      if (left !== undefined) {
        // An answer whose body is still being read fails with this error too, not the socket's own,
        // so the caller tells its deadline from a lost connection and does not try again. Decided in
        // the check phase after the timer's turn, as the idle timeout is: an answer that arrived in
        // time is read even when the loop comes to it late.
        deadline = setTimeout(
          () =>
            setImmediate(() => {
              if (closed) return;
              const error = new DeadlinePassed(`${options.service} gave no answer within the caller's deadline`);
              answer?.destroy(error);
              req.destroy(error);
            }),
          Math.min(left, MAX_TIMER_MS),
        );
      }
      req.end(request.body);
    });
  };
}

/** A failure worth another attempt: a 5xx or 429 answer, or a connection lost before or while reading. */
export class Retryable extends Error {
  constructor(cause: unknown) {
    super('retryable', { cause });
  }
}

export const isRetryableStatus = (status: number) => status >= 500 || status === 429;

/** Runs once() up to maxAttempts times while it throws Retryable, with jittered backoff; the last cause is thrown. */
export async function withRetries<T>(maxAttempts: number, once: () => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await once();
    } catch (error) {
      if (!(error instanceof Retryable)) throw error;
      if (tries >= maxAttempts) throw error.cause;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 100 * 2 ** tries));
    }
  }
}

/** A response body, refused past maxBytes (with onTooLarge's error). */
export async function readBody(response: IncomingMessage, maxBytes: number, onTooLarge: (declared?: number) => Error): Promise<Buffer> {
  const declared = Number(response.headers['content-length']);
  if (declared > maxBytes) {
    response.destroy();
    throw onTooLarge(declared);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      response.destroy();
      throw onTooLarge();
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks, size);
}
