import type { Stack } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import { HttpOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { CfnWebACL } from 'aws-cdk-lib/aws-wafv2';
import { ORIGIN_VERIFY_HEADER } from '../../shared/platform/config';
import { VIEWER_HOST_HEADER } from '../../shared/platform/http/public-url';
import { originRequestsOf, type BehaviourPlan, type BehaviourRequests, type EdgeRoute } from './edge-requests';

/**
 * The WAF's requests per client address in its 5-minute window (about 10 a second): far above a
 * person's, even through a shared NAT, and far below a script's flood.
 */
const WAF_REQUESTS_PER_ADDRESS = 3_000;
/**
 * Where the feeds are served (functions/table.ts's feed routes): polled by feed readers, and by
 * aggregators (Feedly, Inoreader …) from a few addresses for many readers each, so they are left
 * out of the per-address rule above and held to one of their own.
 */
export const FEED_PATH_PREFIX = '/feeds/';
/**
 * An aggregator's address in the 5-minute window (100 a second): thousands of readers' feeds
 * polled every few minutes each. Each token is held to its own rate by the feed functions
 * (LIMITS.feedPollsPerToken), so this only stops one address's flood of made-up tokens, each of
 * which costs a MySQL lookup.
 */
const WAF_FEED_REQUESTS_PER_ADDRESS = 30_000;
/** A web ACL for CloudFront (scope CLOUDFRONT) exists only in us-east-1, so a stack with CloudFront is deployed there. */
export const CLOUDFRONT_REGION = 'us-east-1';
/**
 * Where a body over the common rule set's 8 KB is allowed: the audits, whose requests carry up to
 * MAX_AUDITED_IDS accepted ids (ids of 24 to 88 characters: up to about 90 KB) and are an admin's, behind the session check. Each
 * audit route's path starts with it (test/infra/deploy-traps.test.ts checks the table's).
 */
export const LARGE_BODY_PATH_PREFIX = '/admin/audit/';
/** The label the common rule set's SizeRestrictions_BODY puts on a request whose body is over 8 KB, even when it only counts. */
const LARGE_BODY_LABEL = 'awswaf:managed:aws:core-rule-set:SizeRestrictions_Body';

/**
 * The distribution's behaviours, in precedence order, the default last: what each forwards is
 * derived from the routes it serves (edge-requests.ts).
 */
export const EDGE_BEHAVIOURS: readonly BehaviourPlan[] = [
  {
    name: 'FeedRequests',
    pathPattern: `${FEED_PATH_PREFIX}*`,
    methods: ['GET', 'HEAD'],
    // Feeds carry no cookie (their token is in the path), and CloudFront passes a conditional GET's
    // If-None-Match and If-Modified-Since on only when it forwards no cookies, so that a poll whose
    // copy is current is answered 304 by the function.
    noCookies: 'a feed reader sends none, and the conditional headers pass only without cookies',
    noQueryStrings: 'a feed URL is whole in its path',
  },
  { name: 'ApiRequests', methods: ['GET', 'HEAD', 'OPTIONS', 'PUT', 'PATCH', 'POST', 'DELETE'] },
];

/**
 * CloudFront in front of the API with a WAF web ACL (a rate limit per client address, and AWS's
 * common rule set), since WAF cannot be attached to an HTTP API. Nothing is cached: every
 * request goes to the API with the origin header, the viewer's address (CloudFront-Viewer-Address,
 * for clientAddress) and what the functions read. Its resources are the stack's own children (see stack.ts).
 */
export class Edge {
  /**
   * The header CloudFront adds to every request it passes to the API; the functions refuse
   * requests without it. Never rotated: CloudFront reads it once per deploy (see nag.ts).
   */
  readonly originSecret: Secret;
  readonly distribution: cloudfront.Distribution;

  constructor(stack: Stack, props: { api: HttpApi; logs: Bucket; routes: readonly EdgeRoute[] }) {
    this.originSecret = new Secret(stack, 'OriginSecret', {
      description: 'The header CloudFront sends the API with every request, proving it came through the distribution',
      generateSecretString: { passwordLength: 48, excludePunctuation: true },
    });
    const visibility = (metricName: string) => ({ cloudWatchMetricsEnabled: true, metricName, sampledRequestsEnabled: true });
    const feedPaths = {
      byteMatchStatement: {
        fieldToMatch: { uriPath: {} },
        positionalConstraint: 'STARTS_WITH',
        searchString: FEED_PATH_PREFIX,
        textTransformations: [{ priority: 0, type: 'NONE' }],
      },
    };
    const webAcl = new CfnWebACL(stack, 'WebAcl', {
      scope: 'CLOUDFRONT',
      defaultAction: { allow: {} },
      visibilityConfig: visibility('surge'),
      rules: [
        {
          name: 'RatePerAddress',
          priority: 0,
          action: { block: {} },
          statement: {
            rateBasedStatement: {
              limit: WAF_REQUESTS_PER_ADDRESS,
              aggregateKeyType: 'IP',
              evaluationWindowSec: 300,
              scopeDownStatement: { notStatement: { statement: feedPaths } },
            },
          },
          visibilityConfig: visibility('surgeRatePerAddress'),
        },
        {
          name: 'AwsCommonRules',
          priority: 1,
          overrideAction: { none: {} },
          statement: {
            managedRuleGroupStatement: {
              vendorName: 'AWS',
              name: 'AWSManagedRulesCommonRuleSet',
              // It would block every audit (a 403 from CloudFront): it only labels here, and the next rule blocks the rest.
              ruleActionOverrides: [{ name: 'SizeRestrictions_BODY', actionToUse: { count: {} } }],
            },
          },
          visibilityConfig: visibility('surgeAwsCommonRules'),
        },
        {
          name: 'LargeBodyOutsideAudits',
          priority: 2,
          action: { block: {} },
          statement: {
            andStatement: {
              statements: [
                { labelMatchStatement: { scope: 'LABEL', key: LARGE_BODY_LABEL } },
                {
                  notStatement: {
                    statement: {
                      byteMatchStatement: {
                        fieldToMatch: { uriPath: {} },
                        positionalConstraint: 'STARTS_WITH',
                        searchString: LARGE_BODY_PATH_PREFIX,
                        textTransformations: [{ priority: 0, type: 'NONE' }],
                      },
                    },
                  },
                },
              ],
            },
          },
          visibilityConfig: visibility('surgeLargeBodyOutsideAudits'),
        },
        {
          name: 'FeedRatePerAddress',
          priority: 3,
          action: { block: {} },
          statement: {
            rateBasedStatement: { limit: WAF_FEED_REQUESTS_PER_ADDRESS, aggregateKeyType: 'IP', evaluationWindowSec: 300, scopeDownStatement: feedPaths },
          },
          visibilityConfig: visibility('surgeFeedRatePerAddress'),
        },
      ],
    });
    const [feeds, rest] = originRequestsOf(props.routes, EDGE_BEHAVIOURS);
    const policy = (behaviour: BehaviourRequests, comment: string) =>
      new cloudfront.OriginRequestPolicy(stack, behaviour.plan.name, {
        comment,
        headerBehavior: behaviour.headers.length
          ? cloudfront.OriginRequestHeaderBehavior.allowList(...behaviour.headers)
          : cloudfront.OriginRequestHeaderBehavior.none(),
        cookieBehavior: behaviour.cookies.length
          ? cloudfront.OriginRequestCookieBehavior.allowList(...behaviour.cookies)
          : cloudfront.OriginRequestCookieBehavior.none(),
        queryStringBehavior: behaviour.queryStrings.length
          ? cloudfront.OriginRequestQueryStringBehavior.allowList(...behaviour.queryStrings)
          : cloudfront.OriginRequestQueryStringBehavior.none(),
      });
    const requests = policy(rest!, 'What the routes read (their schemas), the correlation id, and the viewer address and host');
    const feedRequests = policy(feeds!, 'Feed polls: what the feed routes read, the conditional headers among it, no cookies');
    // API Gateway is reached at its own host: the one the viewer asked for goes on in a header of ours, whatever a client sent in it (public-url.ts).
    const viewerHost = new cloudfront.Function(stack, 'ViewerHost', {
      comment: 'Passes the host the viewer asked for on to the API',
      runtime: cloudfront.FunctionRuntime.JS_2_0,
      code: cloudfront.FunctionCode.fromInline(
        `function handler(event) { var request = event.request; request.headers['${VIEWER_HOST_HEADER}'] = { value: request.headers.host.value }; return request; }`,
      ),
    });
    const functionAssociations = [{ function: viewerHost, eventType: cloudfront.FunctionEventType.VIEWER_REQUEST }];
    const origin = new HttpOrigin(`${props.api.apiId}.execute-api.${stack.region}.${stack.urlSuffix}`, {
      protocolPolicy: cloudfront.OriginProtocolPolicy.HTTPS_ONLY,
      originSslProtocols: [cloudfront.OriginSslPolicy.TLS_V1_2],
      // Resolved by CloudFormation from the secret; the functions look the same secret up.
      customHeaders: { [ORIGIN_VERIFY_HEADER]: this.originSecret.secretValue.unsafeUnwrap() },
    });
    this.distribution = new cloudfront.Distribution(stack, 'Cdn', {
      comment: 'Surge API behind WAF',
      webAclId: webAcl.attrArn,
      priceClass: cloudfront.PriceClass.PRICE_CLASS_100,
      enableLogging: true,
      logBucket: props.logs,
      logFilePrefix: 'cloudfront/',
      defaultBehavior: {
        origin,
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
        allowedMethods: allowedMethods(rest!.plan),
        cachePolicy: cloudfront.CachePolicy.CACHING_DISABLED,
        originRequestPolicy: requests,
        functionAssociations,
      },
      additionalBehaviors: {
        [feeds!.plan.pathPattern!]: {
          origin,
          viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
          allowedMethods: allowedMethods(feeds!.plan),
          // Nothing is kept at the edge: a feed is one reader's mail, and the function's 304 is the cheap answer.
          cachePolicy: cloudfront.CachePolicy.CACHING_DISABLED,
          originRequestPolicy: feedRequests,
          functionAssociations,
        },
      },
    });
  }
}

/** CloudFront's allowed-methods setting that is exactly a behaviour's methods: it has three. */
function allowedMethods(plan: BehaviourPlan): cloudfront.AllowedMethods {
  const setting = [cloudfront.AllowedMethods.ALLOW_GET_HEAD, cloudfront.AllowedMethods.ALLOW_GET_HEAD_OPTIONS, cloudfront.AllowedMethods.ALLOW_ALL].find(
    (candidate) => candidate.methods.length === plan.methods.length && plan.methods.every((method) => candidate.methods.includes(method)),
  );
  if (!setting) throw new Error(`The behaviour ${plan.name} allows ${plan.methods.join(', ')}: CloudFront allows GET and HEAD, those with OPTIONS, or all`);
  return setting;
}
