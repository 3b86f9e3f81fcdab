import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerChecker, type HttpAnswer } from '../../infra/openapi/answer-check';
import { openApiDocument } from '../../infra/openapi/document';
import { startGateway, type Gateway } from '../../infra/twin/events/gateway';

/*
 * Every answer of a route is held to the OpenAPI document under test: by the twin's gateway, and
 * by test/support/routes.ts for the tests that call handlers directly. Here the check itself, on
 * the real document, with answers each breaking it in one way, and the gateway's use of it.
 */

const document = await openApiDocument();
const check = answerChecker(document);

const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' };
const answer = (status: number, body: unknown, headers: Record<string, string> = JSON_TYPE): HttpAnswer => ({
  status,
  headers,
  body: body === undefined ? undefined : JSON.stringify(body),
});
const error = (code: string) => ({ error: { code, message: 'm' } });

describe('an answer held to the document', () => {
  it.each([
    ['GET /me', 200, answer(200, { id: 7, email: 'a@example.com', role: 'user' })],
    ['GET /me', 401, answer(401, error('UNAUTHENTICATED'))],
    ['GET /me', 503, answer(503, error('UNAVAILABLE'), { ...JSON_TYPE, 'retry-after': '1' })],
    ['GET /me', 429, answer(429, { message: 'Too Many Requests' })],
    ['DELETE /sessions/current', 204, answer(204, undefined, { 'cache-control': 'no-store' })],
  ])('%s %s that keeps it passes', (route, _, given) => {
    const [method, path] = route.split(' ') as [string, string];

    expect(check(method, path, given)).toEqual([]);
  });

  it.each([
    ['a status it does not declare', 'GET /me', answer(418, error('INTERNAL')), /does not declare/],
    ['a 500, declared by no route', 'GET /me', answer(500, error('INTERNAL')), /does not declare/],
    ['an error code its status does not list for it', 'GET /me', answer(401, error('SOLD_OUT')), /outside its schema/],
    ['a field its body does not declare', 'GET /me', answer(200, { id: 7, email: 'a@example.com', role: 'user', password: 'x' }), /outside its schema/],
    ['a body of the wrong type', 'GET /me', answer(200, { id: '7', email: 'a@example.com', role: 'user' }), /outside its schema/],
    ['another content type', 'GET /me', answer(200, { id: 7, email: 'a@example.com', role: 'user' }, { 'content-type': 'text/plain' }), /as text\/plain/],
    ['a body that is not JSON', 'GET /me', { status: 200, headers: JSON_TYPE, body: '{"id":' }, /not JSON/],
    ['a 503 without Retry-After', 'GET /me', answer(503, error('UNAVAILABLE')), /without its Retry-After/],
    ['a Retry-After that is not whole seconds', 'GET /me', answer(503, error('UNAVAILABLE'), { ...JSON_TYPE, 'retry-after': 'soon' }), /not whole seconds/],
    ['a body where none is declared', 'DELETE /sessions/current', answer(204, {}), /declares none/],
  ])('%s breaks it', (_, route, given, problem) => {
    const [method, path] = route.split(' ') as [string, string];

    expect(check(method, path, given)?.join('\n')).toMatch(problem);
  });

  it("leaves alone a route the document does not describe (the twin's own)", () => {
    expect(check('GET', '/__twin/ceiling', answer(200, { ok: true }))).toBeUndefined();
  });
});

describe('the gateway under test', () => {
  let gateway: Gateway;
  const failures: string[] = [];

  beforeAll(async () => {
    // Prepare: GET /me planted to answer a status its route does not declare.
    gateway = await startGateway(
      [
        { method: 'GET', path: '/me', invoke: async () => ({ statusCode: 418, headers: JSON_TYPE, body: JSON.stringify(error('INTERNAL')) }) },
        { method: 'GET', path: '/items/{itemId}', invoke: async () => ({ statusCode: 404, headers: JSON_TYPE, body: JSON.stringify(error('NOT_FOUND')) }) },
      ],
      0,
      (route, failure) => failures.push(`${route}: ${failure.message}`),
      { check },
    );
  });
  afterAll(() => gateway.close());

  const get = (path: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      request(`${gateway.url}${path}`, (res) => {
        let body = '';
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      })
        .on('error', reject)
        .end();
    });

  it('answers 500 instead of an answer outside the contract, and reports it as a function error', async () => {
    // Act
    const planted = await get('/me');

    // Assess
    expect(planted.status).toBe(500);
    expect(JSON.parse(planted.body)).toMatchObject({ message: 'Answer outside the contract', problems: [expect.stringMatching(/GET \/me answered 418/)] });
    expect(failures).toEqual([expect.stringMatching(/^GET \/me: Answer outside the contract/)]);
  });

  it('passes an answer the contract declares as the function gave it', async () => {
    const declared = await get('/items/nothing-here');

    expect(declared).toEqual({ status: 404, body: JSON.stringify(error('NOT_FOUND')) });
  });
});
