/**
 * The CloudFront distribution of a synthesized template, read into what the twin's edge does with a
 * request: its behaviours by path pattern and precedence, what each allows and forwards, its
 * viewer-request functions and the origin's custom headers. Anything it cannot model stops the
 * edge at start, naming it, rather than being let through unseen.
 */
import { pathPatternMatcher } from '../../stack/edge-requests';
import type { CfnTemplate } from './template';

/** The managed cache policy CachingDisabled: nothing kept, nothing added to the origin request. */
const CACHING_DISABLED = '4135ea2d-6df8-44a3-9df3-4b5a84be39ad';

/** What one of an origin request policy's three parts forwards. */
export interface Forwarding {
  behavior: 'none' | 'all' | 'whitelist' | 'allExcept' | 'allViewer' | 'allViewerAndWhitelistCloudFront';
  names: string[];
}

export interface EdgeBehaviour {
  /** Its path pattern; undefined for the default behaviour. */
  pathPattern?: string;
  matches(path: string): boolean;
  methods: string[];
  headers: Forwarding;
  cookies: Forwarding;
  queryStrings: Forwarding;
  /** The code of each viewer-request CloudFront Function, in order. */
  viewerRequest: string[];
}

/** A custom header the origin gets on every request, its value from a secret (the logical id of the template's secret). */
export interface OriginSecretHeader {
  name: string;
  secretLogicalId: string;
}

export interface EdgeDistribution {
  /** In precedence order, the default last. */
  behaviours: EdgeBehaviour[];
  originHeaders: OriginSecretHeader[];
  /** The logical id of the web ACL the distribution names, if any. */
  webAclLogicalId?: string;
}

type Resources = CfnTemplate['Resources'];

function refOf(value: unknown, what: string): string {
  const ref = (value as { Ref?: unknown } | undefined)?.Ref ?? (value as { 'Fn::GetAtt'?: unknown[] } | undefined)?.['Fn::GetAtt']?.[0];
  if (typeof ref !== 'string') throw new Error(`The twin's edge cannot read ${what}: ${JSON.stringify(value)}`);
  return ref;
}

function forwarding(config: Record<string, any> | undefined, kind: 'Header' | 'Cookie' | 'QueryString'): Forwarding {
  const behavior = config?.[`${kind}Behavior`] as Forwarding['behavior'] | undefined;
  if (!behavior) throw new Error(`The twin's edge cannot read an origin request policy's ${kind} behaviour`);
  const names = (config?.[kind === 'QueryString' ? 'QueryStrings' : `${kind}s`] ?? []) as string[];
  return { behavior, names: kind === 'Header' ? names.map((name) => name.toLowerCase()) : names };
}

/** `{{resolve:secretsmanager:<secret>:SecretString:::}}` with the secret a Ref: the secret's logical id. */
function secretReference(value: unknown, header: string): string {
  const parts = (value as { 'Fn::Join'?: [string, unknown[]] } | undefined)?.['Fn::Join']?.[1];
  const ref = parts?.find((part) => typeof part === 'object');
  const text = parts?.filter((part) => typeof part === 'string').join('|') ?? '';
  if (!ref || !text.startsWith('{{resolve:secretsmanager:') || !text.endsWith(':SecretString:::}}')) {
    throw new Error(`The twin's edge cannot resolve the origin header ${header}: ${JSON.stringify(value)} (it resolves a whole Secrets Manager secret)`);
  }
  return refOf(ref, `the origin header ${header}'s secret`);
}

function behaviourOf(resources: Resources, config: Record<string, any>): EdgeBehaviour {
  if (config.CachePolicyId !== CACHING_DISABLED) {
    throw new Error(
      `The twin's edge models no cache: a behaviour with cache policy ${JSON.stringify(config.CachePolicyId)} (${config.PathPattern ?? 'default'}) would need one`,
    );
  }
  const policyId = refOf(config.OriginRequestPolicyId, 'an origin request policy that is not the stack’s own');
  const policy = resources[policyId]?.Properties.OriginRequestPolicyConfig as Record<string, any> | undefined;
  if (!policy) throw new Error(`The twin's edge found no origin request policy ${policyId}`);
  const viewerRequest = ((config.FunctionAssociations ?? []) as { EventType: string; FunctionARN: unknown }[]).map((association) => {
    if (association.EventType !== 'viewer-request') throw new Error(`The twin's edge runs viewer-request functions only, not ${association.EventType}`);
    const fn = resources[refOf(association.FunctionARN, 'a CloudFront Function')]!.Properties;
    if (fn.FunctionConfig?.Runtime !== 'cloudfront-js-2.0')
      throw new Error(`The twin's edge runs cloudfront-js-2.0 functions, not ${fn.FunctionConfig?.Runtime}`);
    return fn.FunctionCode as string;
  });
  if (config.LambdaFunctionAssociations?.length) throw new Error("The twin's edge runs no Lambda@Edge function");
  const pathPattern = config.PathPattern as string | undefined;
  const matcher = pathPattern === undefined ? () => true : pathPatternMatcher(pathPattern);
  return {
    ...(pathPattern === undefined ? {} : { pathPattern }),
    matches: matcher,
    methods: config.AllowedMethods as string[],
    headers: forwarding(policy.HeadersConfig, 'Header'),
    cookies: forwarding(policy.CookiesConfig, 'Cookie'),
    queryStrings: forwarding(policy.QueryStringsConfig, 'QueryString'),
    viewerRequest,
  };
}

/** The template's one CloudFront distribution; throws when it has none or more, or what the edge cannot model. */
export function distributionOf(template: CfnTemplate): EdgeDistribution {
  const resources = template.Resources;
  const distributions = Object.values(resources).filter((resource) => resource.Type === 'AWS::CloudFront::Distribution');
  if (distributions.length !== 1) throw new Error(`The twin's edge models one CloudFront distribution; the template has ${distributions.length}`);
  const config = distributions[0]!.Properties.DistributionConfig as Record<string, any>;
  const origins = config.Origins as { Id: string; OriginCustomHeaders?: { HeaderName: string; HeaderValue: unknown }[] }[];
  if (origins.length !== 1) throw new Error(`The twin's edge models one origin (the API); the distribution has ${origins.length}`);
  return {
    behaviours: [...((config.CacheBehaviors ?? []) as Record<string, any>[]), config.DefaultCacheBehavior as Record<string, any>].map((behaviour) =>
      behaviourOf(resources, behaviour),
    ),
    originHeaders: (origins[0]!.OriginCustomHeaders ?? []).map(({ HeaderName, HeaderValue }) => ({
      name: HeaderName.toLowerCase(),
      secretLogicalId: secretReference(HeaderValue, HeaderName),
    })),
    ...(config.WebACLId ? { webAclLogicalId: refOf(config.WebACLId, 'the web ACL') } : {}),
  };
}

/** The behaviour that serves a path: the first whose pattern matches, the default last. */
export function behaviourServing(distribution: EdgeDistribution, path: string): EdgeBehaviour {
  return distribution.behaviours.find((behaviour) => behaviour.matches(path))!;
}
