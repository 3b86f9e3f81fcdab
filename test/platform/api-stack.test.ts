import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import { EmfCollector, onStdoutLine } from '../../infra/twin/lambda/emf';
import { api } from '../../shared/api/api';
import { soldOut } from '../../shared/reservations/codes';
import { UnavailableError } from '../../shared/platform/errors';
import type { ApiEvent } from '../../shared/platform/http/middleware';
import { json } from '../../shared/platform/http/response';
import { METRICS_FLUSH_MS, publishHeldMetrics } from '../../shared/platform/metrics';
import * as z from '../../shared/platform/zod';
import { httpEvent, lambdaContext } from '../support/events';
import { captureLog } from '../support/logs';

/** A public function that answers with what the stack handed it, the session cookie's route among them. */
const echo = api({
  access: 'public',
  readsSessionCookie: true,
  body: z.strictObject({ name: z.string() }),
  answers: {
    200: z.object({ headers: z.record(z.string(), z.optional(z.string())), cookies: z.record(z.string(), z.string()), body: z.object({ name: z.string() }) }),
  },
  errors: [],
}).handler(async (event: ApiEvent<{ body: { name: string } }>) => json(200, { headers: event.headers, cookies: event.cookieMap, body: event.input.body }));

const invoke = async (event: APIGatewayProxyEventV2) => {
  const result = await echo(event, lambdaContext());
  return { status: result.statusCode, body: JSON.parse(result.body!) };
};

describe('the HTTP middleware stack', () => {
  it('lower-cases the header names of a hand-made event before reading the content type', async () => {
    const event = httpEvent('post-sessions', { body: { name: 'a' } });
    const { 'content-type': contentType, ...others } = event.headers;
    event.headers = { ...others, 'Content-Type': contentType!, 'X-Trace': 'abc' };

    const { status, body } = await invoke(event);

    expect(status).toBe(200);
    expect(body.body).toEqual({ name: 'a' });
    expect(body.headers).toMatchObject({ 'content-type': contentType, 'x-trace': 'abc' });
    expect(Object.keys(body.headers).filter((name) => name !== name.toLowerCase())).toEqual([]);
  });

  it('races no early timeout of its own: a call bounded on its own answers even past the moment middy would have cut in', async () => {
    // Prepare: an invocation with 1 ms left, whose work takes 20 ms (every real call is bounded by its own budget).
    const slow = api({ access: 'public', answers: { 200: z.object({ done: z.boolean() }) }, errors: [] }).handler(async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return json(200, { done: true });
    });

    // Act
    const result = await slow(httpEvent('post-sessions'), lambdaContext('surge-test', 1));

    // Assess
    expect(result.statusCode).toBe(200);
  });

  it('maps cookies by name, first occurrence winning, skipping nameless ones', async () => {
    const event = httpEvent('post-sessions', { body: { name: 'a' }, cookies: ['a=1', '=orphan', 'b = 2 ', 'a=3', 'novalue'] });

    expect((await invoke(event)).body.cookies).toEqual({ a: '1', b: '2' });
    expect((await invoke(httpEvent('post-sessions', { body: { name: 'a' } }))).body.cookies).toEqual({});
  });

  it('hands a public route that does not say it reads the session no cookie at all, as the edge forwards it none', async () => {
    // Prepare
    const blind = api({ access: 'public', answers: { 200: z.object({ cookies: z.record(z.string(), z.string()) }) }, errors: [] }).handler(async (event) =>
      json(200, { cookies: event.cookieMap }),
    );

    // Act
    const result = await blind(httpEvent('post-sessions', { cookies: ['sid=1.abc', 'theme=dark'] }), lambdaContext());

    // Assess
    expect(JSON.parse(String((result as { body: string }).body))).toEqual({ cookies: {} });
  });

  it('refuses a body that is not JSON, or not declared as JSON, with a JSON error', async () => {
    const notJson = await invoke(httpEvent('post-sessions', { rawBody: '{"name":' }));
    const undeclared = await invoke(httpEvent('post-sessions', { body: { name: 'a' }, headers: { 'content-type': 'text/plain' } }));

    expect(notJson).toEqual({ status: 400, body: { error: { code: 'BAD_JSON', message: 'The body is not valid JSON' } } });
    expect(undeclared.status).toBe(415);
    expect(undeclared.body.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it("counts a route's outcomes, held in the instance and printed together in one EMF line by the invocation that ends past the interval, and prints nothing for a route without", async () => {
    // Prepare: a route that sells out on its second call, and one with no outcomes; the clock ours
    let calls = 0;
    const sale = api({ access: 'public', outcomes: { prefix: 'sale', ok: 'accepted' }, answers: { 202: z.object({}) }, errors: ['SOLD_OUT'] }).handler(
      async () => {
        calls += 1;
        if (calls > 1) throw soldOut('Sold out');
        return json(202, {});
      },
    );
    const plain = api({ access: 'public', answers: { 200: z.object({}) }, errors: [] }).handler(async () => json(200, {}));
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    publishHeldMetrics(); // what the earlier tests counted
    const emf = new EmfCollector();
    const lines: string[] = [];
    const stopReading = onStdoutLine((line) => (emf.take(line), line.startsWith('{"_aws"') && lines.push(line)));

    // Act: two sales within the interval, a route without outcomes, then one past it
    let answers, linesWithin;
    try {
      answers = [
        await sale(httpEvent('get-me'), lambdaContext()),
        await sale(httpEvent('get-me'), lambdaContext()),
        await plain(httpEvent('get-me'), lambdaContext()),
      ];
      linesWithin = lines.length;
      vi.setSystemTime(Date.now() + METRICS_FLUSH_MS);
      await plain(httpEvent('get-me'), lambdaContext());
    } finally {
      stopReading();
      vi.useRealTimers();
    }

    // Assess
    expect(answers.map((a) => a.statusCode)).toEqual([202, 409, 200]);
    expect(linesWithin).toBe(0);
    expect(lines).toHaveLength(1);
    expect(emf.snapshot().metrics.map(({ name, sum, namespace, dimensions }) => ({ name, sum, namespace, dimensions }))).toEqual([
      { name: 'sale.accepted', sum: 1, namespace: 'Surge', dimensions: { service: 'surge' } },
      { name: 'sale.soldOut', sum: 1, namespace: 'Surge', dimensions: { service: 'surge' } },
    ]);
  });

  it('logs why it answered 503, and the failure behind it, while the client is told only to retry', async () => {
    // Prepare: a route whose store timed out
    const away = api({ access: 'public', answers: { 200: z.object({}) }, errors: [] }).handler(async () => {
      throw new UnavailableError('The value is being loaded, try again shortly', new Error('Command timed out'));
    });
    const log = captureLog();

    // Act
    let result;
    try {
      result = await away(httpEvent('get-me'), lambdaContext());
    } finally {
      log.stop();
    }

    // Assess
    expect(result.statusCode).toBe(503);
    expect(JSON.parse(result.body!)).toEqual({ error: { code: 'UNAVAILABLE', message: 'The value is being loaded, try again shortly' } });
    const logged = log
      .lines()
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.message === 'Dependency unavailable');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ code: 'UNAVAILABLE', reason: 'The value is being loaded, try again shortly', cause: { message: 'Command timed out' } });
  });
});
