import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AnswerCheck } from '../../openapi/answer-check';
import { Throttled } from '../lambda/concurrency';
import { answerText, gatewayAnswer, toEvent, writeAnswer } from './gateway-payload';
import { compileRoutes, matchRoute, type CompiledRoute, type HttpRoute } from './http-routes';

/** API Gateway HTTP APIs accept payloads up to 10 MB. */
export const MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;
/** An HTTP API's quota on the request line and the header values together (not adjustable). */
export const MAX_REQUEST_LINE_AND_HEADER_BYTES = 10_240;
/** A synchronous invocation's response payload, the function's result as JSON: Lambda fails the invocation past it. */
export const MAX_LAMBDA_RESPONSE_BYTES = 6 * 1024 * 1024;

/** The request line and every header value, as API Gateway's quota measures them. */
function requestLineAndHeaderBytes(req: IncomingMessage): number {
  let bytes = Buffer.byteLength(`${req.method} ${req.url} HTTP/${req.httpVersion}`);
  for (let i = 1; i < req.rawHeaders.length; i += 2) bytes += Buffer.byteLength(req.rawHeaders[i]!);
  return bytes;
}

/**
 * An upper bound on the bytes of a value's JSON, from the lengths of its strings (a UTF-16 unit is
 * at most 6 bytes of JSON, as \uXXXX): reads each string's length where JSON.stringify would copy
 * the whole result, and counts the headers and cookies beside the body, as Lambda does.
 */
function jsonBytesBound(value: unknown): number {
  if (typeof value === 'string') return value.length * 6 + 2;
  if (value === null || typeof value !== 'object') return 24;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return Buffer.byteLength(JSON.stringify(value) ?? '');
  let bytes = 2;
  if (Array.isArray(value)) {
    for (const item of value) bytes += jsonBytesBound(item) + 1;
    return bytes;
  }
  for (const key in value) bytes += key.length * 6 + 4 + jsonBytesBound((value as Record<string, unknown>)[key]);
  return bytes;
}

/** Whether a function's result is past Lambda's response payload: measured as JSON only when its bound could be. */
function pastLambdaResponse(result: unknown): boolean {
  return jsonBytesBound(result) > MAX_LAMBDA_RESPONSE_BYTES && Buffer.byteLength(JSON.stringify(result) ?? '') > MAX_LAMBDA_RESPONSE_BYTES;
}

function send(res: ServerResponse, status: number, body: string, headers: Record<string, string | string[]> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/**
 * A request's body, or undefined past `maxBytes` (the rest is read, not kept): API Gateway's 10 MB
 * unless said (the edge reads bodies the same way; Lambda's Invoke API holds them to 6 MB).
 */
export function readBody(req: IncomingMessage, maxBytes = MAX_PAYLOAD_BYTES): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
    });
    req.on('end', () => resolve(size > maxBytes ? undefined : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** API Gateway's answer past a throttle (the stage's or the route's). */
export const TOO_MANY_REQUESTS = '{"message":"Too Many Requests"}';
/** API Gateway's answer to an invocation that failed, timed out or was throttled. */
export const INTERNAL_SERVER_ERROR = '{"message":"Internal Server Error"}';

/** What every request gets before the gateway serves its routes: the twin behind it is not ready, a retry soon will be answered. */
const STARTING_BODY = JSON.stringify({ error: { code: 'UNAVAILABLE', message: 'The twin is starting' } });

export interface Gateway {
  url: string;
  server: Server;
  /** Serves these routes from now on; until then every request is answered 503 UNAVAILABLE. */
  serve(routes: CompiledRoute[]): void;
  close(): Promise<void>;
}

export interface GatewayOptions {
  /** Under test: each answer of a route held to the contract first. */
  check?: AnswerCheck | undefined;
  /**
   * As deployed (the bundles `cdk deploy` ships): each route's throttle applied, 429 past it, and
   * an invocation Lambda throttles answered 500, as API Gateway answers it. Otherwise (source mode,
   * whose benches drive routes past their throttles) none is applied, and a function at its
   * ceiling is answered 429 in its route throttle's stead.
   */
  routeThrottles?: boolean;
}

/**
 * The local stand-in for an API Gateway HTTP API: each request becomes a payload 2.0 event for the
 * route's function, invoked in this process, and its result becomes the HTTP response.
 */
export async function startGateway(
  routes: HttpRoute[],
  port: number,
  onFunctionError: (route: string, error: Error) => void,
  options: GatewayOptions = {},
): Promise<Gateway> {
  const compiled = compileRoutes(routes);
  const gateway = await listenGateway(port, onFunctionError, options);
  gateway.serve(compiled);
  return gateway;
}

/**
 * The gateway, listening at once but answering every request 503 until serve() gives it its
 * routes: its address is known, and probed, while what it fronts is still starting. Under test
 * (check given), each answer of a route is held to the contract first: one that breaks it is
 * answered 500 instead, and reported as a function error.
 */
export async function listenGateway(
  port: number,
  onFunctionError: (route: string, error: Error) => void,
  { check, routeThrottles = false }: GatewayOptions = {},
): Promise<Gateway> {
  let compiled: CompiledRoute[] | undefined;
  const server = createServer(async (req, res) => {
    if (!compiled) {
      req.resume();
      return send(res, 503, STARTING_BODY, { 'retry-after': '1' });
    }
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const matched = matchRoute(compiled, req.method, path);
    if (!matched) {
      req.resume();
      return send(res, 404, '{"message":"Not Found"}');
    }
    const { route, pathParameters } = matched;
    if (requestLineAndHeaderBytes(req) > MAX_REQUEST_LINE_AND_HEADER_BYTES) {
      req.resume();
      return send(res, 431, '{"message":"Request Header Fields Too Large"}');
    }
    if (routeThrottles && !route.passesThrottle()) {
      req.resume();
      return send(res, 429, TOO_MANY_REQUESTS);
    }
    const body = await readBody(req).catch(() => undefined);
    if (!body) return send(res, 413, '{"message":"Request Entity Too Large"}');
    try {
      const result = await route.invoke(toEvent(req, body, route, pathParameters));
      // Lambda fails such an invocation, and API Gateway answers a failed one 500.
      if (pastLambdaResponse(result)) throw new Error(`The response is past Lambda's ${MAX_LAMBDA_RESPONSE_BYTES} bytes`);
      const answer = gatewayAnswer(result);
      const problems = check?.(route.method, route.path, answerText(answer));
      if (problems?.length) {
        onFunctionError(route.routeKey, new Error(`Answer outside the contract: ${problems.join('; ')}`));
        return send(res, 500, JSON.stringify({ message: 'Answer outside the contract', problems }));
      }
      writeAnswer(res, answer);
    } catch (error) {
      // A function at its ceiling (its cap, its environments' slots): API Gateway answers Lambda's
      // throttle with a 500, which the route's throttle is there to forestall; Lambda counts it as
      // a throttle, not an error. Where the twin applies no route throttle, the cap answers that 429.
      if (error instanceof Throttled) return routeThrottles ? send(res, 500, INTERNAL_SERVER_ERROR) : send(res, 429, TOO_MANY_REQUESTS);
      // A failed or timed-out function is a 500 to the client, as API Gateway answers it.
      onFunctionError(route.routeKey, error as Error);
      send(res, 500, INTERNAL_SERVER_ERROR);
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
