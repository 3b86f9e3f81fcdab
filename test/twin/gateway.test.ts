import { request, type IncomingMessage } from 'node:http';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenGateway, startGateway, type Gateway } from '../../infra/twin/gateway';
import { compileRoutes } from '../../infra/twin/http-routes';
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

describe('the HTTP gateway', () => {
  let gateway: Gateway;
  const seen: APIGatewayProxyEventV2[] = [];
  const failures: string[] = [];

  beforeAll(async () => {
    gateway = await startGateway(
      [
        { method: 'POST', path: '/items/{itemId}/orders', invoke: async (event) => (seen.push(event), { statusCode: 202, headers: { 'x-echo': 'yes' }, cookies: ['a=1; Path=/', 'b=2; Path=/'], body: '{"ok":true}' }) },
        { method: 'GET', path: '/bare', invoke: async () => ({ hello: 'world' }) },
        { method: 'GET', path: '/binary', invoke: async () => ({ statusCode: 200, headers: { 'content-type': 'image/png' }, isBase64Encoded: true, body: Buffer.from([0, 1, 2, 255]).toString('base64') }) },
        { method: 'GET', path: '/broken', invoke: async () => { throw new Error('boom'); } },
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
    for (const [method, path] of [['GET', '/nowhere'], ['GET', '/items/1/orders'], ['POST', '/items/1/orders/extra']]) {
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
