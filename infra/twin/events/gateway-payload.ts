/** API Gateway's payload format 2.0 both ways: an HTTP request as the event a function gets, and its result as the HTTP response. */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { HttpAnswer } from '../../openapi/answer-check';
import type { CompiledRoute } from './http-routes';

const TEXT_TYPES = /^(text\/|application\/([a-z0-9.+-]*\+)?(json|xml|x-www-form-urlencoded|javascript))/i;

function joinHeaders(req: IncomingMessage): { headers: Record<string, string>; cookies?: string[] } {
  const headers: Record<string, string> = {};
  let cookies: string[] | undefined;
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const value = raw[i + 1]!;
    // Payload 2.0 moves cookies out of the headers into their own array.
    if (name === 'cookie')
      (cookies ??= []).push(
        ...value
          .split(';')
          .map((c) => c.trim())
          .filter(Boolean),
      );
    else headers[name] = name in headers ? `${headers[name]},${value}` : value;
  }
  return { headers, cookies };
}

function queryParameters(rawQueryString: string): Record<string, string> | undefined {
  if (!rawQueryString) return undefined;
  const params: Record<string, string> = {};
  for (const [key, value] of new URLSearchParams(rawQueryString)) {
    params[key] = key in params ? `${params[key]},${value}` : value;
  }
  return params;
}

let lastSecond = 0;
let lastTime = '';

/** requestContext.time, e.g. 17/Jun/2024:15:52:39 +0000; formatted once per second. */
function requestTime(epochMs: number): string {
  const second = Math.floor(epochMs / 1000);
  if (second !== lastSecond) {
    const [, day, month, year, time] = new Date(epochMs).toUTCString().split(' ');
    lastSecond = second;
    lastTime = `${day}/${month}/${year}:${time} +0000`;
  }
  return lastTime;
}

export function toEvent(
  req: IncomingMessage,
  body: Buffer,
  route: CompiledRoute | undefined,
  pathParameters: Record<string, string> | undefined,
): APIGatewayProxyEventV2 {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const rawPath = q < 0 ? url : url.slice(0, q);
  const rawQueryString = q < 0 ? '' : url.slice(q + 1);
  const { headers, cookies } = joinHeaders(req);
  const now = Date.now();
  const text = TEXT_TYPES.test(headers['content-type'] ?? '');
  const host = headers.host ?? '127.0.0.1';
  return {
    version: '2.0',
    routeKey: route?.routeKey ?? '$default',
    rawPath,
    rawQueryString,
    ...(cookies ? { cookies } : {}),
    headers,
    ...(rawQueryString ? { queryStringParameters: queryParameters(rawQueryString) } : {}),
    ...(pathParameters ? { pathParameters } : {}),
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: host,
      domainPrefix: host.split('.')[0]!,
      http: {
        method: req.method ?? 'GET',
        path: rawPath,
        protocol: `HTTP/${req.httpVersion}`,
        // An IPv4 client of a dual-stack socket shows as ::ffff:a.b.c.d; API Gateway says a.b.c.d.
        sourceIp: (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, ''),
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: route?.routeKey ?? '$default',
      stage: '$default',
      time: requestTime(now),
      timeEpoch: now,
    },
    ...(body.length ? { body: text ? body.toString('utf8') : body.toString('base64') } : {}),
    isBase64Encoded: body.length > 0 && !text,
  };
}

/** A handler's result as API Gateway answers it: status, headers by lower-case name, the body to write. */
export interface GatewayAnswer {
  status: number;
  headers: Record<string, string | string[]>;
  body: string | Buffer;
}

/** Maps a handler's result to HTTP the way API Gateway does for payload format 2.0. */
export function gatewayAnswer(result: unknown): GatewayAnswer {
  const structured: APIGatewayProxyStructuredResultV2 =
    result !== null && typeof result === 'object' && 'statusCode' in result
      ? (result as APIGatewayProxyStructuredResultV2)
      : // A bare value is taken as a 200 JSON body, as API Gateway infers it.
        { statusCode: 200, headers: { 'content-type': 'application/json' }, body: typeof result === 'string' ? result : JSON.stringify(result ?? null) };
  // A text body is written as it is (encoded once, on its way to the socket), not copied first.
  const body = structured.isBase64Encoded ? Buffer.from(structured.body ?? '', 'base64') : (structured.body ?? '');
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(structured.headers ?? {})) headers[name.toLowerCase()] = String(value);
  if (structured.cookies?.length) headers['set-cookie'] = structured.cookies;
  return { status: structured.statusCode ?? 200, headers, body };
}

/** An answer as the API's contract reads it (infra/openapi/answer-check.ts): its headers' and its body's text. */
export function answerText(answer: GatewayAnswer): HttpAnswer {
  const headers = Object.fromEntries(Object.entries(answer.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : value]));
  return { status: answer.status, headers, body: answer.body.toString() };
}

export function writeAnswer(res: ServerResponse, answer: GatewayAnswer): void {
  answer.headers['content-length'] = String(Buffer.byteLength(answer.body));
  res.writeHead(answer.status, answer.headers);
  res.end(answer.body);
}
