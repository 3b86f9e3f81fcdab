/** The stack's the edge: CloudFront and WAF (infra/stack/edge.ts). */
import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { pathPatternMatcher } from '../../../infra/stack/edge-requests';
import { routesOfTable } from '../../../infra/table-routes';
import { SESSION_COOKIE } from '../../../shared/sessions/store';
import { functions } from '../../../functions/table';
import { ofType, functionOf } from '../../support/dev-stack';
import * as prod from '../../support/prod-stack';

describe('the CDK app (dev)', () => {
  it('leaves CloudFront out of dev, whose API serves requests straight from API Gateway', () => {
    expect(ofType('AWS::CloudFront::Distribution')).toEqual([]);
    expect(ofType('AWS::WAFv2::WebACL')).toEqual([]);
    for (const spec of functions) expect(functionOf(spec.id).Properties.Environment.Variables, spec.id).not.toHaveProperty('ORIGIN_SECRET_ID');
  });
});

describe('the CDK app in the prod stage', () => {
  it('puts CloudFront with a WAF web ACL in front of the API: a rate limit per address and AWS’s common rule set', () => {
    const [acl] = prod.ofType('AWS::WAFv2::WebACL');
    const [distribution] = prod.ofType('AWS::CloudFront::Distribution');

    expect(acl!.Properties).toMatchObject({ Scope: 'CLOUDFRONT', DefaultAction: { Allow: {} } });
    expect(acl!.Properties.Rules).toEqual([
      expect.objectContaining({
        Action: { Block: {} },
        Statement: {
          RateBasedStatement: expect.objectContaining({
            AggregateKeyType: 'IP',
            Limit: expect.any(Number),
            ScopeDownStatement: { NotStatement: expect.anything() },
          }),
        },
      }),
      expect.objectContaining({
        OverrideAction: { None: {} },
        Statement: { ManagedRuleGroupStatement: expect.objectContaining({ VendorName: 'AWS', Name: 'AWSManagedRulesCommonRuleSet' }) },
      }),
      // Its 8 KB body limit, outside the audits (test/infra/deploy-traps.test.ts).
      expect.objectContaining({ Name: 'LargeBodyOutsideAudits', Action: { Block: {} } }),
      // The feeds', fitted to aggregators: many readers' feeds from one address.
      expect.objectContaining({
        Name: 'FeedRatePerAddress',
        Action: { Block: {} },
        Statement: { RateBasedStatement: expect.objectContaining({ AggregateKeyType: 'IP', ScopeDownStatement: expect.anything() }) },
      }),
    ]);
    const [perAddress, , , feeds] = acl!.Properties.Rules as { Statement: { RateBasedStatement: { Limit: number; ScopeDownStatement: unknown } } }[];
    expect(feeds!.Statement.RateBasedStatement.Limit).toBeGreaterThan(perAddress!.Statement.RateBasedStatement.Limit);
    expect(perAddress!.Statement.RateBasedStatement.ScopeDownStatement).toEqual({
      NotStatement: { Statement: feeds!.Statement.RateBasedStatement.ScopeDownStatement },
    });
    expect(JSON.stringify(feeds!.Statement.RateBasedStatement.ScopeDownStatement)).toContain('"SearchString":"/feeds/"');
    expect(distribution!.Properties.DistributionConfig.WebACLId).toEqual({
      'Fn::GetAtt': [Object.keys(prod.resources).find((id) => prod.resources[id] === acl), 'Arn'],
    });
  });

  it('sends the API, over TLS, a generated secret as its origin header, the viewer’s address and what the functions read, caching nothing', () => {
    const config = prod.ofType('AWS::CloudFront::Distribution')[0]!.Properties.DistributionConfig;
    const [origin] = config.Origins;
    const secretId = Object.keys(prod.resources).find((id) => String(prod.resources[id]!.Properties.Description).startsWith('The header CloudFront sends'))!;

    expect(origin.CustomOriginConfig).toMatchObject({ OriginProtocolPolicy: 'https-only', OriginSSLProtocols: ['TLSv1.2'] });
    expect(origin.OriginCustomHeaders).toEqual([{ HeaderName: 'x-origin-verify', HeaderValue: expect.anything() }]);
    expect(JSON.stringify(origin.OriginCustomHeaders)).toContain(`{{resolve:secretsmanager:`);
    expect(JSON.stringify(origin.OriginCustomHeaders)).toContain(secretId);
    expect(config.DefaultCacheBehavior).toMatchObject({ ViewerProtocolPolicy: 'https-only', CachePolicyId: '4135ea2d-6df8-44a3-9df3-4b5a84be39ad' });
  });

  it('forwards to every route, through the behaviour that serves it, each header, cookie and query string it reads', async () => {
    // Prepare: the distribution's behaviours in precedence order, the default last, each with its policy.
    const config = prod.ofType('AWS::CloudFront::Distribution')[0]!.Properties.DistributionConfig;
    const behaviours = [...(config.CacheBehaviors ?? []), config.DefaultCacheBehavior] as {
      PathPattern?: string;
      AllowedMethods: string[];
      OriginRequestPolicyId: { Ref: string };
    }[];
    const names = (schema: unknown) => (schema ? Object.keys((schema as { _zod: { def: { shape: object } } })._zod.def.shape) : []);
    const forwards = (
      part: { HeaderBehavior?: string; CookieBehavior?: string; QueryStringBehavior?: string; Headers?: string[]; Cookies?: string[]; QueryStrings?: string[] },
      name: string,
    ) => {
      const behavior = part.HeaderBehavior ?? part.CookieBehavior ?? part.QueryStringBehavior;
      const listed = (part.Headers ?? part.Cookies ?? part.QueryStrings ?? []).some((n) =>
        part.HeaderBehavior ? n.toLowerCase() === name.toLowerCase() : n === name,
      );
      return (
        behavior === 'all' ||
        behavior === 'allViewer' ||
        behavior === 'allViewerAndWhitelistCloudFront' ||
        (behavior === 'whitelist' && listed) ||
        (behavior === 'allExcept' && !listed)
      );
    };
    const dropped: string[] = [];

    // Act: each route's reads, from its entry's schemas, against the policy of the behaviour whose pattern serves its path.
    for (const route of (await routesOfTable()).filter((r) => !r.spec.loadTest)) {
      const path = route.path.replace(/\{[^}]+\}/g, 'x');
      const behaviour = behaviours.find((b) => b.PathPattern === undefined || pathPatternMatcher(b.PathPattern)(path))!;
      const policy = prod.resources[behaviour.OriginRequestPolicyId.Ref]!.Properties.OriginRequestPolicyConfig;
      const where = `${route.method} ${route.path} through the behaviour ${behaviour.PathPattern ?? '(default)'}`;
      if (!behaviour.AllowedMethods.includes(route.method)) dropped.push(`${where}: the method`);
      const headers = [
        ...names(route.api.headers),
        ...(route.api.body ? ['content-type'] : []),
        'x-correlation-id',
        'cloudfront-viewer-address',
        'x-forwarded-host',
      ];
      for (const header of headers) if (!forwards(policy.HeadersConfig, header)) dropped.push(`${where}: the header ${header}`);
      if ((route.api.access !== 'public' || route.api.readsSessionCookie) && !forwards(policy.CookiesConfig, SESSION_COOKIE))
        dropped.push(`${where}: the cookie ${SESSION_COOKIE}`);
      for (const query of names(route.api.query)) if (!forwards(policy.QueryStringsConfig, query)) dropped.push(`${where}: the query string ${query}`);
    }

    // Assess
    expect(dropped, 'what a route reads and the edge does not forward').toEqual([]);
  });

  it('passes a feed poll’s If-None-Match and If-Modified-Since on, forwarding no cookies nor query strings (CloudFront drops them otherwise), and every request’s viewer host', () => {
    const config = prod.ofType('AWS::CloudFront::Distribution')[0]!.Properties.DistributionConfig;
    const feeds = (
      config.CacheBehaviors as { PathPattern: string; OriginRequestPolicyId: { Ref: string }; AllowedMethods: string[]; FunctionAssociations: unknown[] }[]
    ).find((b) => b.PathPattern === '/feeds/*')!;
    const policy = prod.resources[feeds.OriginRequestPolicyId.Ref]!.Properties.OriginRequestPolicyConfig;
    const [viewerHost] = prod.ofType('AWS::CloudFront::Function');

    expect(policy.HeadersConfig.Headers).toEqual(expect.arrayContaining(['if-none-match', 'if-modified-since', 'x-forwarded-host']));
    expect(policy.CookiesConfig.CookieBehavior).toBe('none');
    expect(policy.QueryStringsConfig.QueryStringBehavior).toBe('none');
    expect(feeds.AllowedMethods).toEqual(['GET', 'HEAD']);
    expect(viewerHost!.Properties.FunctionCode).toContain("request.headers['x-forwarded-host'] = { value: request.headers.host.value }");
    for (const behavior of [config.DefaultCacheBehavior, feeds])
      expect(behavior.FunctionAssociations).toEqual([expect.objectContaining({ EventType: 'viewer-request' })]);
  });

  it('has every route’s function check the origin header, the secret named in its environment and readable by it alone', () => {
    const secretId = Object.keys(prod.resources).find((id) => String(prod.resources[id]!.Properties.Description).startsWith('The header CloudFront sends'))!;
    const policies = prod.ofType('AWS::IAM::Policy').map((p) => JSON.stringify(p.Properties));

    for (const spec of prod.deployed) {
      const variables = prod.functionOf(spec.id).Properties.Environment.Variables;
      if (spec.trigger.kind === 'http') expect(variables.ORIGIN_SECRET_ID, spec.id).toEqual({ Ref: secretId });
      else expect(variables, spec.id).not.toHaveProperty('ORIGIN_SECRET_ID');
    }
    const readers = policies.filter((p) => p.includes(`"Ref":"${secretId}"`));
    expect(readers).toHaveLength(prod.deployed.filter((f) => f.trigger.kind === 'http').length);
  });
});
