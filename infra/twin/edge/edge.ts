/**
 * The twin's stand-in for the stack's CloudFront distribution and its WAF web ACL, built from the
 * synthesized template (distribution.ts, waf.ts): in front of the gateway as CloudFront is in front
 * of API Gateway, it serves each request by the behaviour whose path pattern matches, refuses the
 * methods that behaviour does not allow and what the web ACL blocks, runs its viewer-request
 * functions, and sends the gateway only what the behaviour's origin request policy forwards, with
 * the origin's secret header and the viewer's address. `npm start -- --edge`; docs/twin.md, "The edge".
 */
import { randomBytes } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { behaviourServing, type EdgeBehaviour, type EdgeDistribution, type Forwarding } from './distribution';
import { viewerFunction, type ViewerAnswer, type ViewerRequest } from './viewer-function';
import type { WebAcl } from './waf';
import { readBody } from '../events/gateway';

/** The twin's own routes (/__twin/…) are not AWS's: they go to the gateway as they came. */
const TWIN_ROUTES = '/__twin/';

/** What CloudFront answers a request its web ACL blocks (no custom response set): 403 and its own page. */
const BLOCKED_PAGE =
  '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN"><HTML><HEAD><TITLE>ERROR: The request could not be satisfied</TITLE></HEAD><BODY><H1>403 ERROR</H1><H2>The request could not be satisfied.</H2><HR noshade size="1px">Request blocked.</BODY></HTML>\n';
const METHOD_PAGE =
  '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN"><HTML><HEAD><TITLE>ERROR: The request could not be satisfied</TITLE></HEAD><BODY><H1>403 ERROR</H1><H2>The request could not be satisfied.</H2><HR noshade size="1px">This distribution is not configured to allow the HTTP request method that was used for this request.</BODY></HTML>\n';

/** What the edge serves from once the twin behind it is ready. */
export interface EdgeConfig {
  distribution: EdgeDistribution;
  webAcl?: WebAcl;
  /** The gateway's address: API Gateway's endpoint, the distribution's one origin. */
  originUrl: string;
  /** The value of each origin header's secret, by the secret's logical id in the template. */
  secretValues: Readonly<Record<string, string>>;
}

export interface Edge {
  url: string;
  serve(config: EdgeConfig): void;
  close(): Promise<void>;
}

/** The hop-by-hop headers no proxy passes on, and what the edge sets itself. */
const NOT_PASSED = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'host', 'content-length']);

const viewerIpOf = (req: IncomingMessage) => (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');

/** A query string's name as CloudFront compares it with a policy's: decoded, or as sent when it does not decode. */
function queryName(pair: string): string {
  const name = pair.split('=')[0]!;
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

function answer(res: ServerResponse, status: number, body: string, type = 'text/html', headers: OutgoingHttpHeaders = {}): void {
  res.writeHead(status, {
    'content-type': type,
    'content-length': Buffer.byteLength(body),
    server: 'CloudFront',
    'x-cache': 'Error from cloudfront',
    ...headers,
  });
  res.end(body);
}

function passes(forwarding: Forwarding, name: string): boolean {
  switch (forwarding.behavior) {
    case 'none':
      return false;
    case 'whitelist':
      return forwarding.names.includes(name);
    case 'allExcept':
      return !forwarding.names.includes(name);
    default:
      return true;
  }
}

/** The viewer's request in a CloudFront Function's shape. */
function viewerRequestOf(req: IncomingMessage, path: string, query: string): ViewerRequest {
  const headers: ViewerRequest['headers'] = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (name !== 'cookie' && value !== undefined) headers[name] = { value: Array.isArray(value) ? value.join(', ') : value };
  }
  const cookies: ViewerRequest['cookies'] = {};
  for (const pair of (req.headers.cookie ?? '').split(/;\s*/)) {
    const eq = pair.indexOf('=');
    if (eq > 0 && !(pair.slice(0, eq) in cookies)) cookies[pair.slice(0, eq)] = { value: pair.slice(eq + 1) };
  }
  const querystring: ViewerRequest['querystring'] = {};
  for (const [name, value] of new URLSearchParams(query)) querystring[name] ??= { value };
  return { method: req.method ?? 'GET', uri: path, querystring, headers, cookies };
}

/** What the origin request policy forwards of the (function-modified) viewer request, and what CloudFront adds. */
function originRequest(behaviour: EdgeBehaviour, request: ViewerRequest, rawQuery: string, req: IncomingMessage, config: EdgeConfig, bodyBytes: number) {
  const headers: OutgoingHttpHeaders = {};
  for (const [name, { value }] of Object.entries(request.headers)) if (!NOT_PASSED.has(name) && passes(behaviour.headers, name)) headers[name] = value;
  const viewerIp = viewerIpOf(req);
  // Headers CloudFront makes itself: the viewer's address where the policy asks, whatever a viewer sent in it.
  delete headers['cloudfront-viewer-address'];
  if (behaviour.headers.names.includes('cloudfront-viewer-address')) headers['cloudfront-viewer-address'] = `${viewerIp}:${req.socket.remotePort ?? 0}`;
  if (!passes(behaviour.headers, 'user-agent')) headers['user-agent'] = 'Amazon CloudFront';
  headers['x-forwarded-for'] = viewerIp;
  headers.via = '2.0 twin.cloudfront.net (CloudFront)';
  headers['x-amz-cf-id'] = randomBytes(21).toString('base64url');
  const cookies = Object.entries(request.cookies).filter(([name]) => passes(behaviour.cookies, name));
  if (cookies.length) headers.cookie = cookies.map(([name, { value }]) => `${name}=${value}`).join('; ');
  for (const { name, secretLogicalId } of config.distribution.originHeaders) headers[name] = config.secretValues[secretLogicalId]!;
  if (bodyBytes || req.headers['content-length'] !== undefined) headers['content-length'] = String(bodyBytes);
  // The query string as the viewer sent it, less what the policy does not forward.
  const query =
    behaviour.queryStrings.behavior === 'none'
      ? ''
      : rawQuery
          .split('&')
          .filter((pair) => pair && passes(behaviour.queryStrings, queryName(pair)))
          .join('&');
  return { headers, path: `${request.uri}${query ? `?${query}` : ''}` };
}

function forward(res: ServerResponse, originUrl: string, method: string, path: string, headers: OutgoingHttpHeaders, body: Buffer): void {
  const upstream = httpRequest(`${originUrl}${path}`, { method, headers }, (reply) => {
    res.writeHead(reply.statusCode ?? 502, { ...reply.headers, via: '1.1 twin.cloudfront.net (CloudFront)', 'x-cache': 'Miss from cloudfront' });
    reply.pipe(res);
  });
  upstream.on('error', () => {
    if (!res.headersSent) answer(res, 502, '<HTML><BODY><H1>502 ERROR</H1>The request could not be satisfied.</BODY></HTML>\n');
    else res.destroy();
  });
  upstream.end(body);
}

/**
 * The edge, listening at once but answering 503 until serve() gives it what to serve from (the
 * gateway behind it answers the same until the twin is ready).
 */
export async function listenEdge(port: number): Promise<Edge> {
  let config: EdgeConfig | undefined;
  let functions = new Map<string, ReturnType<typeof viewerFunction>>();
  const server: Server = createServer((req, res) => {
    serveOne(req, res).catch(() => {
      // A request the edge could not read or pass on: CloudFront's 502, never a twin that stops.
      if (!res.headersSent) answer(res, 502, '<HTML><BODY><H1>502 ERROR</H1>The request could not be satisfied.</BODY></HTML>\n');
      else res.destroy();
    });
  });
  async function serveOne(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!config) {
      req.resume();
      return answer(res, 503, JSON.stringify({ error: { code: 'UNAVAILABLE', message: 'The twin is starting' } }), 'application/json', { 'retry-after': '1' });
    }
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const rawQuery = q < 0 ? '' : url.slice(q + 1);
    const body = await readBody(req);
    if (!body) return answer(res, 413, '{"message":"Request Entity Too Large"}', 'application/json');
    if (path.startsWith(TWIN_ROUTES)) {
      const headers: OutgoingHttpHeaders = { ...req.headers };
      delete headers.host;
      return forward(res, config.originUrl, req.method ?? 'GET', url, headers, body);
    }
    const behaviour = behaviourServing(config.distribution, path);
    const method = req.method ?? 'GET';
    if (!behaviour.methods.includes(method)) return answer(res, 403, METHOD_PAGE);
    const verdict = config.webAcl?.inspect({
      ip: viewerIpOf(req),
      method,
      uriPath: path,
      queryString: rawQuery,
      headers: req.headers as Record<string, string | undefined>,
      bodyBytes: body.length,
      at: Date.now(),
    });
    if (verdict?.action === 'block') return answer(res, 403, BLOCKED_PAGE);
    let request = viewerRequestOf(req, path, rawQuery);
    for (const code of behaviour.viewerRequest) {
      let run = functions.get(code);
      if (!run) functions.set(code, (run = viewerFunction(code)));
      const result = run(request, viewerIpOf(req));
      if ('statusCode' in result) {
        const given = result as ViewerAnswer;
        return answer(
          res,
          given.statusCode,
          '',
          'text/plain',
          Object.fromEntries(Object.entries(given.headers ?? {}).map(([name, { value }]) => [name, value])),
        );
      }
      request = result;
    }
    const origin = originRequest(behaviour, request, rawQuery, req, config, body.length);
    forward(res, config.originUrl, request.method, origin.path, origin.headers, body);
  }
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  return {
    url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : port}`,
    serve(given) {
      functions = new Map();
      config = given;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
