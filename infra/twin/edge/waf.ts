/**
 * A WAF web ACL of a synthesized template, evaluated as AWS WAF evaluates it for CloudFront: rules
 * by priority, labels added by matching rules visible to later ones, Count going on and Block or
 * Allow ending, rate-based rules counting each address's requests in their window. Of AWS's
 * managed rule groups, only what their documentation states precisely is evaluated
 * (COMMON_RULE_SET); a statement or rule group it cannot evaluate stops the edge at start, naming
 * it (docs/twin.md, "The edge").
 */
import type { CfnTemplate } from './template';

/** A request as WAF inspects it. */
export interface InspectedRequest {
  ip: string;
  method: string;
  /** The path, without the query string. */
  uriPath: string;
  /** The query string, without its `?`. */
  queryString: string;
  /** Header names lower-cased. */
  headers: Readonly<Record<string, string | undefined>>;
  bodyBytes: number;
  /** Milliseconds since the epoch: when the request came, for the rate-based rules' windows. */
  at: number;
}

export type Verdict = { action: 'allow'; labels: string[] } | { action: 'block'; rule: string; labels: string[] };

type Statement = Record<string, any>;

/**
 * The rules of AWS's core rule set (AWSManagedRulesCommonRuleSet) that its documentation states
 * precisely, with the label each adds. The rest (bad bots' user agents, SSRF, LFI, RFI, XSS,
 * restricted extensions) match patterns AWS does not publish: docs/twin.md says what follows.
 */
const COMMON_RULE_SET: readonly { name: string; label: string; matches(request: InspectedRequest): boolean }[] = [
  { name: 'NoUserAgent_HEADER', label: 'NoUserAgent_Header', matches: (r) => !r.headers['user-agent'] },
  { name: 'SizeRestrictions_QUERYSTRING', label: 'SizeRestrictions_QueryString', matches: (r) => Buffer.byteLength(r.queryString) > 2_048 },
  { name: 'SizeRestrictions_Cookie_HEADER', label: 'SizeRestrictions_Cookie_Header', matches: (r) => Buffer.byteLength(r.headers.cookie ?? '') > 10_240 },
  { name: 'SizeRestrictions_BODY', label: 'SizeRestrictions_Body', matches: (r) => r.bodyBytes > 8_192 },
  { name: 'SizeRestrictions_URIPATH', label: 'SizeRestrictions_URIPath', matches: (r) => Buffer.byteLength(r.uriPath) > 1_024 },
];
const COMMON_RULE_SET_LABELS = 'awswaf:managed:aws:core-rule-set:';

/** Each address's request times within one rate-based rule's window. */
class RateCounter {
  private readonly seen = new Map<string, { times: number[]; first: number }>();
  constructor(
    readonly limit: number,
    private readonly windowMs: number,
  ) {}

  /** Counts this request; true when the address is then over the limit within the window. */
  countAndCheck(ip: string, at: number): boolean {
    let entry = this.seen.get(ip);
    if (!entry) this.seen.set(ip, (entry = { times: [], first: 0 }));
    while (entry.first < entry.times.length && entry.times[entry.first]! <= at - this.windowMs) entry.first++;
    // Dropped in one copy once half are out of the window, so a steady flood costs O(1) a request.
    if (entry.first > entry.times.length / 2) {
      entry.times = entry.times.slice(entry.first);
      entry.first = 0;
    }
    entry.times.push(at);
    return entry.times.length - entry.first > this.limit;
  }
}

const INSPECTED_FIELDS = ['UriPath', 'QueryString', 'Method', 'SingleHeader'];

function fieldOf(request: InspectedRequest, field: Record<string, any>): string {
  if (field.UriPath) return request.uriPath;
  if (field.QueryString) return request.queryString;
  if (field.Method) return request.method;
  if (field.SingleHeader) return request.headers[String(field.SingleHeader.Name).toLowerCase()] ?? '';
  throw new Error(`The twin's WAF cannot inspect ${JSON.stringify(field)}`);
}

function transformed(value: string, transformations: { Type: string }[]): string {
  return transformations.reduce((text, { Type }) => {
    if (Type === 'NONE') return text;
    if (Type === 'LOWERCASE') return text.toLowerCase();
    if (Type === 'URL_DECODE') return decodeURIComponent(text);
    throw new Error(`The twin's WAF cannot apply the text transformation ${Type}`);
  }, value);
}

const POSITIONAL: Record<string, (text: string, search: string) => boolean> = {
  EXACTLY: (text, search) => text === search,
  STARTS_WITH: (text, search) => text.startsWith(search),
  ENDS_WITH: (text, search) => text.endsWith(search),
  CONTAINS: (text, search) => text.includes(search),
};

function byteMatch(statement: Statement, rule: string): (request: InspectedRequest) => boolean {
  const { FieldToMatch, PositionalConstraint, SearchString, TextTransformations } = statement;
  const search = String(SearchString);
  const positional = POSITIONAL[PositionalConstraint as string];
  if (!positional) throw new Error(`The twin's WAF cannot match with ${PositionalConstraint} (rule ${rule})`);
  if (!INSPECTED_FIELDS.some((field) => field in FieldToMatch)) throw new Error(`The twin's WAF cannot inspect ${JSON.stringify(FieldToMatch)} (rule ${rule})`);
  const test = (text: string) => positional(text, search);
  return (request) => test(transformed(fieldOf(request, FieldToMatch), TextTransformations ?? []));
}

/** A compiled statement: whether the request matches, given the labels so far; it may add labels and end the evaluation. */
type Compiled = (request: InspectedRequest, labels: string[]) => boolean;

function compileStatement(statement: Statement, rule: string): Compiled {
  const [kind, body] = Object.entries(statement)[0] ?? [];
  switch (kind) {
    case 'ByteMatchStatement': {
      const match = byteMatch(body, rule);
      return (request) => match(request);
    }
    case 'NotStatement': {
      const inner = compileStatement(body.Statement, rule);
      return (request, labels) => !inner(request, labels);
    }
    case 'AndStatement': {
      const inner = (body.Statements as Statement[]).map((s) => compileStatement(s, rule));
      return (request, labels) => inner.every((s) => s(request, labels));
    }
    case 'OrStatement': {
      const inner = (body.Statements as Statement[]).map((s) => compileStatement(s, rule));
      return (request, labels) => inner.some((s) => s(request, labels));
    }
    case 'LabelMatchStatement': {
      if (body.Scope !== 'LABEL') throw new Error(`The twin's WAF matches whole labels only, not the ${body.Scope} scope (rule ${rule})`);
      return (_request, labels) => labels.includes(body.Key);
    }
    case 'RateBasedStatement': {
      if (body.AggregateKeyType !== 'IP') throw new Error(`The twin's WAF aggregates rate-based rules by IP only, not ${body.AggregateKeyType} (rule ${rule})`);
      const counter = new RateCounter(Number(body.Limit), Number(body.EvaluationWindowSec ?? 300) * 1000);
      const scope = body.ScopeDownStatement ? compileStatement(body.ScopeDownStatement, rule) : () => true;
      return (request, labels) => scope(request, labels) && counter.countAndCheck(request.ip, request.at);
    }
    default:
      throw new Error(
        `The twin's WAF cannot evaluate a ${kind} (rule ${rule}): model it in infra/twin/edge/waf.ts, or say in docs/twin.md why it cannot matter`,
      );
  }
}

interface CompiledRule {
  name: string;
  /** Evaluates the rule: what it ends with ('block', 'allow'), or undefined to go on; it adds its labels. */
  evaluate(request: InspectedRequest, labels: string[]): 'block' | 'allow' | undefined;
}

function actionOf(action: Record<string, unknown> | undefined, rule: string): 'block' | 'allow' | 'count' {
  const [kind, settings] = Object.entries(action ?? {})[0] ?? [];
  if (kind === 'Block' && !(settings as { CustomResponse?: unknown }).CustomResponse) return 'block';
  if (kind === 'Allow') return 'allow';
  if (kind === 'Count') return 'count';
  throw new Error(`The twin's WAF cannot take the action ${JSON.stringify(action)} (rule ${rule})`);
}

function compileManagedGroup(rule: Record<string, any>): CompiledRule {
  const group = rule.Statement.ManagedRuleGroupStatement;
  if (group.VendorName !== 'AWS' || group.Name !== 'AWSManagedRulesCommonRuleSet') {
    throw new Error(
      `The twin's WAF knows no rule of the managed group ${group.VendorName}/${group.Name} (rule ${rule.Name}): model what AWS states of it, or say in docs/twin.md why it cannot matter`,
    );
  }
  if (group.ScopeDownStatement || group.ExcludedRules?.length || group.Version)
    throw new Error(`The twin's WAF evaluates the core rule set whole, at its default version (rule ${rule.Name})`);
  // OverrideAction Count makes every rule of the group count; None leaves each its own action.
  const groupCounts = 'Count' in (rule.OverrideAction ?? {});
  const overrides = new Map<string, 'block' | 'allow' | 'count'>(
    ((group.RuleActionOverrides ?? []) as { Name: string; ActionToUse: Record<string, unknown> }[]).map((o) => [
      o.Name,
      actionOf(o.ActionToUse, `${rule.Name}/${o.Name}`),
    ]),
  );
  for (const name of overrides.keys()) {
    if (!COMMON_RULE_SET.some((r) => r.name === name))
      throw new Error(`The twin's WAF does not model the core rule set's ${name}, which rule ${rule.Name} overrides`);
  }
  return {
    name: rule.Name,
    evaluate(request, labels) {
      for (const inner of COMMON_RULE_SET) {
        if (!inner.matches(request)) continue;
        labels.push(`${COMMON_RULE_SET_LABELS}${inner.label}`);
        const action = groupCounts ? 'count' : (overrides.get(inner.name) ?? 'block');
        if (action !== 'count') return action;
      }
      return undefined;
    },
  };
}

function compileRule(rule: Record<string, any>): CompiledRule {
  if (rule.Statement.ManagedRuleGroupStatement) return compileManagedGroup(rule);
  const matches = compileStatement(rule.Statement, rule.Name);
  const action = actionOf(rule.Action, rule.Name);
  const ruleLabels = ((rule.RuleLabels ?? []) as { Name: string }[]).map((l) => l.Name);
  return {
    name: rule.Name,
    evaluate(request, labels) {
      if (!matches(request, labels)) return undefined;
      labels.push(...ruleLabels);
      return action === 'count' ? undefined : action;
    },
  };
}

export interface WebAcl {
  inspect(request: InspectedRequest): Verdict;
}

/** The template's web ACL of that logical id, compiled; throws on what it cannot evaluate. */
export function webAclOf(template: CfnTemplate, logicalId: string): WebAcl {
  const acl = template.Resources[logicalId];
  if (acl?.Type !== 'AWS::WAFv2::WebACL') throw new Error(`The twin's edge found no web ACL ${logicalId}`);
  const defaultAction = actionOf(acl.Properties.DefaultAction, 'the default action');
  const rules = [...(acl.Properties.Rules as Record<string, any>[])].sort((a, b) => a.Priority - b.Priority).map(compileRule);
  return {
    inspect(request) {
      const labels: string[] = [];
      for (const rule of rules) {
        const ended = rule.evaluate(request, labels);
        if (ended === 'block') return { action: 'block', rule: rule.name, labels };
        if (ended === 'allow') return { action: 'allow', labels };
      }
      return defaultAction === 'block' ? { action: 'block', rule: 'default', labels } : { action: 'allow', labels };
    },
  };
}
