import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenEdge, type Edge } from '../../infra/twin/edge/edge';
import { edgeFromTemplate, type EdgePlan } from '../../infra/twin/edge/from-template';
import { behaviourServing } from '../../infra/twin/edge/distribution';
import type { InspectedRequest, WebAcl } from '../../infra/twin/edge/waf';

/**
 * The twin's edge as the prod stack's synthesized template makes it: each limit it enforces, at
 * the limit and one past it, evaluated on the web ACL and the distribution read from the template.
 */
describe("the twin's edge, read from the prod stack's template", () => {
  let plan: EdgePlan;
  let rateLimits: Record<string, number>;
  let request: (overrides?: Partial<InspectedRequest>) => InspectedRequest;

  beforeAll(async () => {
    plan = await edgeFromTemplate();
    const { Resources } = JSON.parse((await import('node:fs')).readFileSync(plan.templateFile, 'utf8')) as {
      Resources: Record<string, { Type: string; Properties: any }>;
    };
    const acl = Object.values(Resources).find((r) => r.Type === 'AWS::WAFv2::WebACL')!;
    rateLimits = Object.fromEntries(
      (acl.Properties.Rules as any[]).filter((r) => r.Statement.RateBasedStatement).map((r) => [r.Name, r.Statement.RateBasedStatement.Limit]),
    );
    request = (overrides = {}) => ({
      ip: '198.51.100.7',
      method: 'GET',
      uriPath: '/health',
      queryString: '',
      headers: { 'user-agent': 'curl/8' },
      bodyBytes: 0,
      at: Date.now(),
      ...overrides,
    });
  });
  /** A web ACL of its own, so each test's rate counters start at nought. */
  const freshAcl = async (): Promise<WebAcl> => (await edgeFromTemplate()).webAcl!;

  it('serves feeds by their own behaviour (GET and HEAD, the conditional headers, no cookie) and the rest by the default', () => {
    // Act
    const feeds = behaviourServing(plan.distribution, '/feeds/t/atom/all');
    const orders = behaviourServing(plan.distribution, '/items/i/orders');

    // Assess
    expect(feeds).toMatchObject({ pathPattern: '/feeds/*', methods: ['GET', 'HEAD'], cookies: { behavior: 'none' }, queryStrings: { behavior: 'none' } });
    expect(feeds.headers.names).toEqual(expect.arrayContaining(['if-none-match', 'if-modified-since']));
    expect(orders.pathPattern).toBeUndefined();
    expect(orders.headers.names).toEqual(expect.arrayContaining(['waiting-room-pass', 'idempotency-key']));
    expect(orders.cookies).toEqual({ behavior: 'whitelist', names: ['sid'] });
    expect(plan.originSecret.name).toBe(`surge/${plan.originSecret.logicalId}`);
    expect(plan.distribution.originHeaders).toEqual([{ name: 'x-origin-verify', secretLogicalId: plan.originSecret.logicalId }]);
  });

  it('lets a body of 8 KB through anywhere, and one byte more only to the audits', async () => {
    // Prepare
    const acl = await freshAcl();
    const post = (uriPath: string, bodyBytes: number) => acl.inspect(request({ method: 'POST', uriPath, bodyBytes }));

    // Act and assess
    expect(post('/programs', 8_192)).toMatchObject({ action: 'allow' });
    expect(post('/programs', 8_193)).toMatchObject({
      action: 'block',
      rule: 'LargeBodyOutsideAudits',
      labels: ['awswaf:managed:aws:core-rule-set:SizeRestrictions_Body'],
    });
    expect(post('/admin/audit/items/i', 8_193)).toMatchObject({ action: 'allow', labels: ['awswaf:managed:aws:core-rule-set:SizeRestrictions_Body'] });
  });

  it('blocks, as AWS’s core rule set does, a request without a User-Agent and a query, cookie or path past its size', async () => {
    // Prepare
    const acl = await freshAcl();
    const blockedBy = (overrides: Partial<InspectedRequest>) => {
      const verdict = acl.inspect(request(overrides));
      return verdict.action === 'block' ? verdict.rule : 'allowed';
    };

    // Act and assess
    expect(blockedBy({ headers: {} })).toBe('AwsCommonRules');
    expect(blockedBy({ headers: { 'user-agent': '' } })).toBe('AwsCommonRules');
    expect(blockedBy({ queryString: 'q'.repeat(2_048) })).toBe('allowed');
    expect(blockedBy({ queryString: 'q'.repeat(2_049) })).toBe('AwsCommonRules');
    expect(blockedBy({ headers: { 'user-agent': 'curl/8', cookie: 'c'.repeat(10_240) } })).toBe('allowed');
    expect(blockedBy({ headers: { 'user-agent': 'curl/8', cookie: 'c'.repeat(10_241) } })).toBe('AwsCommonRules');
    expect(blockedBy({ uriPath: `/${'p'.repeat(1_023)}` })).toBe('allowed');
    expect(blockedBy({ uriPath: `/${'p'.repeat(1_024)}` })).toBe('AwsCommonRules');
  });

  it('holds each address to its rate outside the feeds, in the window the template gives, and leaves other addresses and the feeds alone', async () => {
    // Prepare
    const acl = await freshAcl();
    const limit = rateLimits.RatePerAddress!;
    const start = Date.now();

    // Act
    const verdicts = Array.from({ length: limit }, (_, i) => acl.inspect(request({ at: start + i })).action);
    const past = acl.inspect(request({ at: start + limit }));
    const otherAddress = acl.inspect(request({ ip: '198.51.100.8', at: start + limit }));
    const feedPoll = acl.inspect(request({ uriPath: '/feeds/t/atom/all', at: start + limit }));
    const windowLater = acl.inspect(request({ at: start + limit + 300_000 }));

    // Assess
    expect(verdicts.filter((v) => v !== 'allow')).toEqual([]);
    expect(past).toMatchObject({ action: 'block', rule: 'RatePerAddress' });
    expect([otherAddress.action, feedPoll.action]).toEqual(['allow', 'allow']);
    expect(windowLater.action).toBe('allow');
  });

  it('holds each address to the feeds’ own, higher rate', async () => {
    // Prepare
    const acl = await freshAcl();
    const limit = rateLimits.FeedRatePerAddress!;
    const start = Date.now();
    const poll = (i: number) => acl.inspect(request({ uriPath: '/feeds/t/atom/all', at: start + i }));

    // Act
    let allowed = 0;
    for (let i = 0; i < limit; i++) if (poll(i).action === 'allow') allowed++;
    const past = poll(limit);

    // Assess
    expect(limit).toBeGreaterThan(rateLimits.RatePerAddress!);
    expect(allowed).toBe(limit);
    expect(past).toMatchObject({ action: 'block', rule: 'FeedRatePerAddress' });
    expect(acl.inspect(request({ at: start + limit })).action).toBe('allow');
  });
});

describe("the twin's edge over HTTP, in front of an origin that records what reaches it", () => {
  let edge: Edge;
  let origin: Server;
  const reached: { path: string; headers: IncomingHttpHeaders }[] = [];

  beforeAll(async () => {
    const plan = await edgeFromTemplate();
    origin = createServer((req, res) => {
      reached.push({ path: req.url!, headers: req.headers });
      req.resume().on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
    });
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    edge = await listenEdge(0);
    edge.serve({
      distribution: plan.distribution,
      ...(plan.webAcl ? { webAcl: plan.webAcl } : {}),
      originUrl: `http://127.0.0.1:${(origin.address() as AddressInfo).port}`,
      secretValues: { [plan.originSecret.logicalId]: 'the-origin-secret' },
    });
  });
  afterAll(async () => {
    await edge.close();
    origin.close();
  });

  /** One request through the edge: its status. */
  const send = (path: string, options: { method?: string; headers?: Record<string, string>; body?: Buffer } = {}) =>
    new Promise<number>((resolve, reject) => {
      const req = request(`${edge.url}${path}`, { method: options.method ?? 'GET', headers: { 'user-agent': 'surge-test', ...options.headers } }, (res) =>
        resolve(res.resume().statusCode!),
      );
      req.on('error', reject);
      req.end(options.body);
    });

  it('passes on only what the behaviour forwards, with the origin secret and the viewer’s address and host', async () => {
    // Act
    const order = await send('/items/i/orders?detail=1&utm=x', {
      method: 'POST',
      headers: { 'waiting-room-pass': 'p', 'idempotency-key': 'k', 'x-extra': 'dropped', cookie: 'sid=1.a; theme=dark', 'content-type': 'application/json' },
      body: Buffer.from('{}'),
    });
    const poll = await send('/feeds/t/atom/all?x=1', { headers: { 'if-none-match': '"1"', cookie: 'sid=1.a' } });

    // Assess
    const [toOrder, toFeed] = reached.slice(-2);
    expect([order, poll]).toEqual([200, 200]);
    expect(toOrder).toMatchObject({
      path: '/items/i/orders?detail=1',
      headers: {
        'waiting-room-pass': 'p',
        'idempotency-key': 'k',
        cookie: 'sid=1.a',
        'x-origin-verify': 'the-origin-secret',
        'user-agent': 'Amazon CloudFront',
      },
    });
    expect(toOrder!.headers['x-extra']).toBeUndefined();
    expect(toOrder!.headers['cloudfront-viewer-address']).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(toOrder!.headers['x-forwarded-host']).toBe(new URL(edge.url).host);
    expect(toFeed).toMatchObject({ path: '/feeds/t/atom/all', headers: { 'if-none-match': '"1"' } });
    expect(toFeed!.headers.cookie).toBeUndefined();
  });

  it('refuses a method the behaviour does not allow, stays up on a query it cannot decode, and answers a body past 10 MB 413', async () => {
    // Act
    const posted = await send('/feeds/t/atom/all', { method: 'POST' });
    const malformed = await send('/health?%E0%A4%A=1');
    const large = await send('/admin/audit/items/i', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Buffer.alloc(10 * 1024 * 1024 + 1, 32),
    });
    const after = await send('/health');

    // Assess
    expect([posted, malformed, large, after]).toEqual([403, 200, 413, 200]);
  });
});
