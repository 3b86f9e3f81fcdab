import { request, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  listenGateway,
  MAX_LAMBDA_RESPONSE_BYTES,
  MAX_PAYLOAD_BYTES,
  MAX_REQUEST_LINE_AND_HEADER_BYTES,
  startGateway,
  type Gateway,
} from '../../infra/twin/events/gateway';
import { compileRoutes } from '../../infra/twin/events/http-routes';
import { fixture } from '../support/events';

function call(url: string, options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}) {
  return new Promise<{ res: IncomingMessage; body: string }>((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', headers: options.headers }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ res, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

function keysOf(value: unknown, prefix = ''): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  return Object.entries(value).flatMap(([k, v]) => [prefix + k, ...keysOf(v, `${prefix}${k}.`)]);
}

/** A function's result whose JSON, as Lambda measures its response payload, is exactly this many bytes. */
function sizedResult(bytes: number) {
  const shell = { statusCode: 200, body: '' };
  return { ...shell, body: 'x'.repeat(bytes - JSON.stringify(shell).length) };
}

/** The same, made up by a header: beside a short body, or with none (a 304's shape). */
function sizedByHeader(bytes: number, withBody: boolean) {
  const shell = { statusCode: withBody ? 200 : 304, headers: { 'x-pad': '' }, ...(withBody ? { body: 'ok' } : {}) };
  return { ...shell, headers: { 'x-pad': 'p'.repeat(bytes - JSON.stringify(shell).length) } };
}

describe('the HTTP gateway', () => {
  let gateway: Gateway;
  const seen: APIGatewayProxyEventV2[] = [];
  const failures: string[] = [];

  beforeAll(async () => {
    gateway = await startGateway(
      [
        {
          method: 'POST',
          path: '/items/{itemId}/orders',
          invoke: async (event) => (
            seen.push(event), { statusCode: 202, headers: { 'x-echo': 'yes' }, cookies: ['a=1; Path=/', 'b=2; Path=/'], body: '{"ok":true}' }
          ),
        },
        { method: 'GET', path: '/bare', invoke: async () => ({ hello: 'world' }) },
        {
          method: 'GET',
          path: '/binary',
          invoke: async () => ({
            statusCode: 200,
            headers: { 'content-type': 'image/png' },
            isBase64Encoded: true,
            body: Buffer.from([0, 1, 2, 255]).toString('base64'),
          }),
        },
        {
          method: 'GET',
          path: '/broken',
          invoke: async () => {
            throw new Error('boom');
          },
        },
        // A result whose JSON is exactly ?bytes= long.
        { method: 'GET', path: '/sized', invoke: async (event) => sizedResult(Number(event.queryStringParameters!.bytes)) },
        {
          method: 'GET',
          path: '/sized-by-header',
          invoke: async (event) => sizedByHeader(Number(event.queryStringParameters!.bytes), event.queryStringParameters!.body === 'yes'),
        },
        {
          method: 'POST',
          path: '/received',
          invoke: async (event) => ({ statusCode: 200, body: String(Buffer.byteLength(event.body ?? '', event.isBase64Encoded ? 'base64' : 'utf8')) }),
        },
      ],
      0,
      (route, error) => failures.push(`${route}: ${error.message}`),
    );
  });
  afterAll(() => gateway.close());

  it('turns a request into a payload 2.0 event shaped like API Gateway sends', async () => {
    // Act
    const { res, body } = await call(`${gateway.url}/items/a%20b/orders?x=1&x=2&y=3`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Cookie: 'sid=1.abc; theme=dark', 'Idempotency-Key': 'k-1' },
      body: '{"quantity":1}',
    });

    // Assess
    const event = seen.at(-1)!;
    const recorded = fixture<APIGatewayProxyEventV2>('apigw-http/post-sessions.json');
    for (const key of keysOf(recorded).filter((k) => !k.startsWith('headers.'))) expect(keysOf(event)).toContain(key);
    expect(event).toMatchObject({
      version: '2.0',
      routeKey: 'POST /items/{itemId}/orders',
      rawPath: '/items/a%20b/orders',
      rawQueryString: 'x=1&x=2&y=3',
      cookies: ['sid=1.abc', 'theme=dark'],
      queryStringParameters: { x: '1,2', y: '3' },
      pathParameters: { itemId: 'a b' },
      body: '{"quantity":1}',
      isBase64Encoded: false,
      requestContext: { http: { method: 'POST', path: '/items/a%20b/orders' }, routeKey: 'POST /items/{itemId}/orders', stage: '$default' },
    });
    expect(event.headers['idempotency-key']).toBe('k-1');
    expect(event.headers.cookie).toBeUndefined();
    expect(res.statusCode).toBe(202);
    expect(res.headers['x-echo']).toBe('yes');
    expect(res.headers['set-cookie']).toEqual(['a=1; Path=/', 'b=2; Path=/']);
    expect(body).toBe('{"ok":true}');
  });

  it('base64-encodes a body that is not text', async () => {
    await call(`${gateway.url}/items/1/orders`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: Buffer.from([0xff, 0x00]) });

    expect(seen.at(-1)).toMatchObject({ isBase64Encoded: true, body: Buffer.from([0xff, 0x00]).toString('base64') });
  });

  it('takes a bare result as a 200 JSON body and decodes base64 results', async () => {
    const bare = await call(`${gateway.url}/bare`);
    const binary = await new Promise<Buffer>((resolve) =>
      request(`${gateway.url}/binary`, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks)));
      }).end(),
    );

    expect(bare.res.headers['content-type']).toBe('application/json');
    expect(JSON.parse(bare.body)).toEqual({ hello: 'world' });
    expect([...binary]).toEqual([0, 1, 2, 255]);
  });

  it('answers an unknown route or method with a 404 JSON body', async () => {
    for (const [method, path] of [
      ['GET', '/nowhere'],
      ['GET', '/items/1/orders'],
      ['POST', '/items/1/orders/extra'],
    ]) {
      const { res, body } = await call(`${gateway.url}${path}`, { method: method! });
      expect(res.statusCode).toBe(404);
      expect(JSON.parse(body)).toEqual({ message: 'Not Found' });
    }
  });

  it('answers a failing function with a 500 and reports it', async () => {
    const { res, body } = await call(`${gateway.url}/broken`);

    expect(res.statusCode).toBe(500);
    expect(JSON.parse(body)).toEqual({ message: 'Internal Server Error' });
    expect(failures).toContain('GET /broken: boom');
  });

  it('holds API Gateway’s and Lambda’s limits: a 10 MB payload, 10,240 bytes of request line and header values, a 6 MB response, each at the limit and one past it', async () => {
    // Prepare
    const payload = (bytes: number) =>
      call(`${gateway.url}/received`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: Buffer.alloc(bytes, 1) });
    // Written by hand, so nothing but these three headers is sent: request line 18 bytes, values 1 + pad + 5.
    const withHeaderBytes = (bytes: number) =>
      new Promise<{ res: { statusCode: number }; body: string }>((resolve, reject) => {
        const socket = connect(Number(new URL(gateway.url).port), '127.0.0.1');
        let reply = '';
        socket.on('data', (chunk) => (reply += chunk));
        socket.on('end', () => resolve({ res: { statusCode: Number(reply.split(' ')[1]) }, body: reply.slice(reply.indexOf('\r\n\r\n') + 4) }));
        socket.on('error', reject);
        socket.end(`GET /bare HTTP/1.1\r\nHost: h\r\nX-Pad: ${'p'.repeat(bytes - 18 - 1 - 5)}\r\nConnection: close\r\n\r\n`);
      });
    const failuresBefore = failures.length;

    // Act
    const [atPayload, pastPayload] = [await payload(MAX_PAYLOAD_BYTES), await payload(MAX_PAYLOAD_BYTES + 1)];
    const [atHeaders, pastHeaders] = [await withHeaderBytes(MAX_REQUEST_LINE_AND_HEADER_BYTES), await withHeaderBytes(MAX_REQUEST_LINE_AND_HEADER_BYTES + 1)];
    const [atResponse, pastResponse] = [
      await call(`${gateway.url}/sized?bytes=${MAX_LAMBDA_RESPONSE_BYTES}`),
      await call(`${gateway.url}/sized?bytes=${MAX_LAMBDA_RESPONSE_BYTES + 1}`),
    ];
    // Only past it: no client reads a header of 6 MB.
    const pastByHeader = await Promise.all(
      ['yes', 'no'].map((body) => call(`${gateway.url}/sized-by-header?body=${body}&bytes=${MAX_LAMBDA_RESPONSE_BYTES + 1}`)),
    );

    // Assess
    expect([atPayload.res.statusCode, atPayload.body]).toEqual([200, String(MAX_PAYLOAD_BYTES)]);
    expect([pastPayload.res.statusCode, pastPayload.body]).toEqual([413, '{"message":"Request Entity Too Large"}']);
    expect(atHeaders.res.statusCode).toBe(200);
    expect([pastHeaders.res.statusCode, pastHeaders.body]).toEqual([431, '{"message":"Request Header Fields Too Large"}']);
    expect([atResponse.res.statusCode, atResponse.body.length]).toEqual([
      200,
      MAX_LAMBDA_RESPONSE_BYTES - JSON.stringify({ statusCode: 200, body: '' }).length,
    ]);
    expect([pastResponse.res.statusCode, pastResponse.body]).toEqual([500, '{"message":"Internal Server Error"}']);
    // Headers count as the body does, beside a body or without one.
    expect(pastByHeader.map(({ res }) => res.statusCode)).toEqual([500, 500]);
    expect(failures.slice(failuresBefore)).toEqual(Array(3).fill(expect.stringContaining("past Lambda's")));
  });

  it('refuses to describe a route twice', async () => {
    const route = { method: 'GET' as const, path: '/x', invoke: async () => null };
    await expect(startGateway([route, route], 0, () => undefined)).rejects.toThrow(/described twice/);
  });

  it('answers every request a retry-safe 503 UNAVAILABLE until it serves its routes, as the twin starts behind it', async () => {
    // Prepare
    const starting = await listenGateway(0, () => undefined);
    try {
      // Act
      const before = await Promise.all([call(`${starting.url}/health`), call(`${starting.url}/nowhere`, { method: 'POST', body: 'x' })]);
      starting.serve(compileRoutes([{ method: 'GET', path: '/health', invoke: async () => ({ status: 'ok' }) }]));
      const after = await call(`${starting.url}/health`);

      // Assess
      for (const { res, body } of before) {
        expect(res.statusCode).toBe(503);
        expect(res.headers['content-type']).toBe('application/json');
        expect(res.headers['retry-after']).toBe('1');
        expect(JSON.parse(body)).toEqual({ error: { code: 'UNAVAILABLE', message: 'The twin is starting' } });
      }
      expect(after.res.statusCode).toBe(200);
      expect(JSON.parse(after.body)).toEqual({ status: 'ok' });
    } finally {
      await starting.close();
    }
  });
});
