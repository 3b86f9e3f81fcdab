import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { HttpMethod } from '../../functions/table';
import { Throttled } from './concurrency';

export interface HttpRoute {
  method: HttpMethod;
  /** API Gateway route path, e.g. /items/{itemId} */
  path: string;
  invoke(event: APIGatewayProxyEventV2): Promise<unknown>;
}

interface CompiledRoute extends HttpRoute {
  routeKey: string;
  pattern: RegExp;
  params: string[];
}

/** API Gateway HTTP APIs accept payloads up to 10 MB. */
const MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;
const TEXT_TYPES = /^(text\/|application\/([a-z0-9.+-]*\+)?(json|xml|x-www-form-urlencoded|javascript))/i;

export function compileRoute(route: HttpRoute): CompiledRoute {
  const params: string[] = [];
  const source = route.path
    .split('/')
    .map((segment) => {
      const param = /^\{([A-Za-z0-9_]+)\}$/.exec(segment);
      if (!param) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      params.push(param[1]!);
      return '([^/]+)';
    })
    .join('/');
  return { ...route, routeKey: `${route.method} ${route.path}`, pattern: new RegExp(`^${source}$`), params };
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function joinHeaders(req: IncomingMessage): { headers: Record<string, string>; cookies?: string[] } {
  const headers: Record<string, string> = {};
  let cookies: string[] | undefined;
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const value = raw[i + 1]!;
    // Payload 2.0 moves cookies out of the headers into their own array.
    if (name === 'cookie') (cookies ??= []).push(...value.split(';').map((c) => c.trim()).filter(Boolean));
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

function send(res: ServerResponse, status: number, body: string, headers: Record<string, string | string[]> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/** Maps a handler's result to HTTP the way API Gateway does for payload format 2.0. */
export function writeResult(res: ServerResponse, result: unknown): void {
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
  headers['content-length'] = String(Buffer.byteLength(body));
  res.writeHead(structured.statusCode ?? 200, headers);
  res.end(body);
}

function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_PAYLOAD_BYTES) chunks.push(chunk);
    });
    req.on('end', () => resolve(size > MAX_PAYLOAD_BYTES ? undefined : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Routes checked and ready to serve: each route key at most once. */
export function compileRoutes(routes: HttpRoute[]): CompiledRoute[] {
  const compiled = routes.map(compileRoute);
  const seen = new Set<string>();
  for (const route of compiled) {
    if (seen.has(route.routeKey)) throw new Error(`Route ${route.routeKey} is described twice`);
    seen.add(route.routeKey);
  }
  return compiled;
}

/** What every request gets before the gateway serves its routes: the twin behind it is not ready. */
const STARTING_BODY = JSON.stringify({ error: { code: 'UNAVAILABLE', message: 'The twin is starting' } });

export interface Gateway {
  url: string;
  server: Server;
  /** Serves these routes from now on; until then every request is answered 503 UNAVAILABLE. */
  serve(routes: CompiledRoute[]): void;
  close(): Promise<void>;
}

/**
 * The local stand-in for an API Gateway HTTP API: each request becomes a payload 2.0 event for the
 * route's function, invoked in this process, and its result becomes the HTTP response.
 */
export async function startGateway(routes: HttpRoute[], port: number, onFunctionError: (route: string, error: Error) => void): Promise<Gateway> {
  const compiled = compileRoutes(routes);
  const gateway = await listenGateway(port, onFunctionError);
  gateway.serve(compiled);
  return gateway;
}

/**
 * The gateway, listening at once but answering every request 503 until serve() gives it its
 * routes: its address is known, and probed, while what it fronts is still starting.
 */
export async function listenGateway(port: number, onFunctionError: (route: string, error: Error) => void): Promise<Gateway> {
  let compiled: CompiledRoute[] | undefined;
  const server = createServer(async (req, res) => {
    if (!compiled) {
      req.resume();
      return send(res, 503, STARTING_BODY);
    }
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    let route: CompiledRoute | undefined;
    let match: RegExpExecArray | null = null;
    for (const candidate of compiled) {
      if (candidate.method !== req.method) continue;
      match = candidate.pattern.exec(path);
      if (match) {
        route = candidate;
        break;
      }
    }
    if (!route || !match) {
      req.resume();
      return send(res, 404, '{"message":"Not Found"}');
    }
    const body = await readBody(req).catch(() => undefined);
    if (!body) return send(res, 413, '{"message":"Request Entity Too Large"}');
    const pathParameters = route.params.length
      ? Object.fromEntries(route.params.map((name, i) => [name, decode(match[i + 1]!)]))
      : undefined;
    try {
      writeResult(res, await route.invoke(toEvent(req, body, route, pathParameters)));
    } catch (error) {
      // A function at its concurrency cap. API Gateway would answer Lambda's throttle with a 500;
      // on AWS the route's throttle (its burst within the cap) answers 429 before that happens.
      // The twin applies no route throttles, and its instances share two cores, so it answers the
      // cap itself with that 429.
      if (error instanceof Throttled) return send(res, 429, '{"message":"Too Many Requests"}');
      // A failed or timed-out function is a 500 to the client, as API Gateway answers it.
      onFunctionError(route.routeKey, error as Error);
      send(res, 500, '{"message":"Internal Server Error"}');
    }
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : port}`;
  return {
    url,
    server,
    serve(routes) {
      compiled = routes;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
