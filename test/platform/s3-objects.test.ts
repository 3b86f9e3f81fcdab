import { createHash, createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createObjectReader, ObjectMissing, objectLocation, ObjectTooLarge, S3RequestFailed } from '../../shared/platform/clients/s3-objects';

const CREDENTIALS = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', sessionToken: 'session-token' };
const REGION = 'eu-west-1';

const sha256 = (data: string) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

/**
 * Signature V4 as S3 checks it, written from AWS's description rather than taken from the SDK, so
 * the reader's requests are held to an independent oracle.
 */
function expectedSignature(input: {
  method: string;
  path: string;
  headers: Record<string, string>;
  signedHeaders: string[];
  amzDate: string;
  secret: string;
  region: string;
}) {
  const canonicalHeaders = input.signedHeaders.map((name) => `${name}:${input.headers[name]!.trim()}\n`).join('');
  const canonicalRequest = [input.method, input.path, '', canonicalHeaders, input.signedHeaders.join(';'), input.headers['x-amz-content-sha256']].join('\n');
  const day = input.amzDate.slice(0, 8);
  const scope = `${day}/${input.region}/s3/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', input.amzDate, scope, sha256(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${input.secret}`, day), input.region), 's3'), 'aws4_request');
  return createHmac('sha256', key).update(stringToSign).digest('hex');
}

function verifies(req: IncomingMessage): boolean {
  const auth = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(
    req.headers.authorization ?? '',
  );
  if (!auth || auth[1] !== CREDENTIALS.accessKeyId) return false;
  const signedHeaders = auth[4]!.split(';');
  if (!['host', 'x-amz-content-sha256', 'x-amz-date', 'x-amz-security-token'].every((h) => signedHeaders.includes(h))) return false;
  const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
  return (
    auth[5] ===
    expectedSignature({
      method: req.method!,
      path: req.url!,
      headers,
      signedHeaders,
      amzDate: headers['x-amz-date']!,
      secret: CREDENTIALS.secretAccessKey,
      region: auth[3]!,
    })
  );
}

let server: Server | undefined;

/** A stand-in for S3 that checks every signature, then answers with the scripted responses in turn. */
async function fakeS3(...answers: ((res: ServerResponse) => void)[]) {
  const seen: { path: string; signed: boolean }[] = [];
  server = createServer((req, res) => {
    seen.push({ path: req.url!, signed: verifies(req) });
    if (!verifies(req)) {
      res.writeHead(403).end('<Error><Code>SignatureDoesNotMatch</Code></Error>');
      return;
    }
    (answers[Math.min(seen.length, answers.length) - 1] ?? ((r) => r.writeHead(500).end()))(res);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { seen, getObject: createObjectReader({ region: REGION, endpoint, credentials: async () => CREDENTIALS, maxAttempts: 3 }) };
}

const body = (text: string) => (res: ServerResponse) => res.writeHead(200, { 'content-length': Buffer.byteLength(text) }).end(text);
const error = (status: number, code: string) => (res: ServerResponse) => res.writeHead(status).end(`<Error><Code>${code}</Code><Message>m</Message></Error>`);

afterEach(() => {
  server?.closeAllConnections();
  server?.close();
});

describe('the signature oracle', () => {
  it('reproduces the GET Object example of the S3 Signature V4 documentation', () => {
    const headers = {
      host: 'examplebucket.s3.amazonaws.com',
      range: 'bytes=0-9',
      'x-amz-content-sha256': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      'x-amz-date': '20130524T000000Z',
    };
    const signature = expectedSignature({
      method: 'GET',
      path: '/test.txt',
      headers,
      signedHeaders: Object.keys(headers),
      amzDate: headers['x-amz-date'],
      secret: CREDENTIALS.secretAccessKey,
      region: 'us-east-1',
    });
    expect(signature).toBe('f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41');
  });
});

describe('createObjectReader', () => {
  it('sends a request S3 would accept, key encoded segment by segment', async () => {
    // Prepare
    const s3 = await fakeS3(body('raw mail'));

    // Act
    const read = await s3.getObject('raw-mail', "inbound/a b+c(1)!*'é", 1_000);

    // Assess
    expect(read.toString()).toBe('raw mail');
    expect(s3.seen).toEqual([{ path: '/raw-mail/inbound/a%20b%2Bc%281%29%21%2A%27%C3%A9', signed: true }]);
  });

  it('retries what S3 asks to be retried, then succeeds', async () => {
    const s3 = await fakeS3(error(503, 'SlowDown'), error(500, 'InternalError'), body('third time'));

    expect((await s3.getObject('b', 'k', 1_000)).toString()).toBe('third time');
    expect(s3.seen).toHaveLength(3);
  });

  it('gives up after its attempts with the status and code S3 gave', async () => {
    const s3 = await fakeS3(error(503, 'SlowDown'));

    await expect(s3.getObject('b', 'k', 1_000)).rejects.toMatchObject(new S3RequestFailed(503, 'SlowDown'));
    expect(s3.seen).toHaveLength(3);
  });

  it('does not retry a refusal', async () => {
    const s3 = await fakeS3(error(403, 'AccessDenied'));

    await expect(s3.getObject('b', 'k', 1_000)).rejects.toMatchObject({ status: 403, code: 'AccessDenied' });
    expect(s3.seen).toHaveLength(1);
  });

  it('tells a missing object apart from a missing bucket', async () => {
    const s3 = await fakeS3(error(404, 'NoSuchKey'), error(404, 'NoSuchBucket'));

    await expect(s3.getObject('b', 'k', 1_000)).rejects.toBeInstanceOf(ObjectMissing);
    await expect(s3.getObject('b', 'k', 1_000)).rejects.toMatchObject(new S3RequestFailed(404, 'NoSuchBucket'));
  });

  it('tries again when the connection drops while the body is read', async () => {
    const s3 = await fakeS3((res) => {
      res.writeHead(200, { 'content-length': 100 });
      // Dropped once the partial body has been handed to the connection, so the client reads it first.
      res.write('partial', () => res.socket?.destroy());
    }, body('whole'));

    expect((await s3.getObject('b', 'k', 1_000)).toString()).toBe('whole');
    expect(s3.seen).toHaveLength(2);
  });

  it('addresses AWS by bucket host, path-style for a bucket with dots, and in China by its own domain', () => {
    expect(objectLocation('raw-mail', 'inbound/x', { region: 'eu-west-1' })).toEqual({
      protocol: 'https:',
      hostname: 'raw-mail.s3.eu-west-1.amazonaws.com',
      path: '/inbound/x',
    });
    expect(objectLocation('raw.mail', 'inbound/x', { region: 'eu-west-1' })).toEqual({
      protocol: 'https:',
      hostname: 's3.eu-west-1.amazonaws.com',
      path: '/raw.mail/inbound/x',
    });
    expect(objectLocation('raw-mail', 'x', { region: 'cn-north-1' }).hostname).toBe('raw-mail.s3.cn-north-1.amazonaws.com.cn');
  });

  it('refuses an object by its declared length, and one whose body runs past the limit', async () => {
    const s3 = await fakeS3(body('x'.repeat(2_000)), (res) => {
      res.writeHead(200, { 'transfer-encoding': 'chunked' });
      res.write('y'.repeat(600));
      res.end('y'.repeat(600));
    });

    await expect(s3.getObject('b', 'k', 1_000)).rejects.toMatchObject(new ObjectTooLarge(1_000, 2_000));
    await expect(s3.getObject('b', 'k', 1_000)).rejects.toMatchObject(new ObjectTooLarge(1_000));
  });
});
