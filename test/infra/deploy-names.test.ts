import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Token } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../infra/app';
import { synthesized as synthesizedStack, type Resource } from '../support/stack';

// Synthesis needs no credentials and no network; nothing may phone home or read a real profile.
process.env.HOME = mkdtempSync(join(tmpdir(), 'surge-cdk-'));
process.env.CDK_DISABLE_VERSION_CHECK = '1';
process.env.CDK_DISABLE_CLI_TELEMETRY = '1';

/** The properties that hold a name an account and region hold once (two stacks setting the same one collide), by type. */
const UNIQUE_NAME_PROPERTY: Record<string, string> = {
  'AWS::Lambda::Function': 'FunctionName',
  'AWS::SQS::Queue': 'QueueName',
  'AWS::SES::ReceiptRuleSet': 'RuleSetName',
  'AWS::RDS::DBCluster': 'DBClusterIdentifier',
  'AWS::RDS::DBProxy': 'DBProxyName',
  'AWS::ElastiCache::ReplicationGroup': 'ReplicationGroupId',
  'AWS::ElastiCache::ServerlessCache': 'ServerlessCacheName',
  'AWS::ElastiCache::User': 'UserId',
  'AWS::ElastiCache::UserGroup': 'UserGroupId',
  'AWS::Logs::LogGroup': 'LogGroupName',
  'AWS::CloudWatch::Dashboard': 'DashboardName',
};

/** A stack's template from these context values, unchecked by cdk-nag: names do not depend on the findings. */
const synthesized = (context: Record<string, unknown>) => synthesizedStack(context, { nag: false });

/** The fixed physical names a template sets (a name CloudFormation makes up is not in it). */
const namesIn = (resources: Record<string, Resource>): string[] =>
  Object.values(resources).flatMap((r) => {
    const value = r.Properties?.[UNIQUE_NAME_PROPERTY[r.Type] ?? ''];
    return typeof value === 'string' ? [`${r.Type} ${value}`] : [];
  });

describe('the stages’ names', () => {
  let dev: ReturnType<typeof synthesized>;
  let prod: ReturnType<typeof synthesized>;

  beforeAll(() => {
    dev = synthesized({});
    prod = synthesized({ stage: 'prod' });
  });

  it('name the stack by its stage', () => {
    expect(dev.stack.stackName).toBe('Surge-dev');
    expect(prod.stack.stackName).toBe('Surge-prod');
  });

  it('give a dev and a prod stack no physical name in common, so both can live in one account and region', () => {
    const devNames = namesIn(dev.resources);
    expect(devNames.length).toBeGreaterThan(30);
    expect(namesIn(prod.resources).filter((name) => devNames.includes(name))).toEqual([]);
  });

  it('start the names of the functions, queues, receipt rule set and API with surge-<stage>-', () => {
    for (const [stage, { resources }] of [
      ['dev', dev],
      ['prod', prod],
    ] as const) {
      const named = Object.values(resources).flatMap((r) => {
        const property = {
          'AWS::Lambda::Function': 'FunctionName',
          'AWS::SQS::Queue': 'QueueName',
          'AWS::SES::ReceiptRuleSet': 'RuleSetName',
          'AWS::ApiGatewayV2::Api': 'Name',
        }[r.Type];
        const name = property && r.Properties?.[property];
        return typeof name === 'string' ? [name] : [];
      });
      expect(named.length, stage).toBeGreaterThan(20);
      for (const name of named) expect(name, stage).toMatch(new RegExp(`^surge-${stage}(-|$)`));
    }
  });

  it('keep the stack name and names of a stack deployed before names had a stage, with -c legacyNames=true', () => {
    const legacy = synthesized({ legacyNames: 'true' });
    const ofType = (type: string, property: string) =>
      Object.values(legacy.resources)
        .filter((r) => r.Type === type)
        .map((r) => r.Properties?.[property]);

    expect(legacy.stack.stackName).toBe('Surge');
    expect(ofType('AWS::Lambda::Function', 'FunctionName')).toContain('surge-health');
    expect(ofType('AWS::SQS::Queue', 'QueueName').sort()).toEqual(['surge-receive-mail-failures', 'surge-reservations', 'surge-reservations-dlq']);
    expect(ofType('AWS::SES::ReceiptRuleSet', 'RuleSetName')).toEqual(['surge-inbound']);
    // The cache's and the cluster's names had a stage already.
    expect(ofType('AWS::RDS::DBCluster', 'DBClusterIdentifier')).toEqual(['surge-dev']);
  });
});

/** Runs `build` with the region the CDK CLI would pass (its environment's), then puts the old one back. */
function inRegion<T>(region: string | undefined, build: () => T): T {
  const before = process.env.CDK_DEFAULT_REGION;
  if (region === undefined) delete process.env.CDK_DEFAULT_REGION;
  else process.env.CDK_DEFAULT_REGION = region;
  try {
    return build();
  } finally {
    if (before === undefined) delete process.env.CDK_DEFAULT_REGION;
    else process.env.CDK_DEFAULT_REGION = before;
  }
}

describe('the region', () => {
  it('stops the synth where SES receives no mail, saying where to deploy instead', () => {
    for (const region of ['eu-central-2', 'me-central-1']) {
      expect(() => inRegion(region, () => synthesized({}))).toThrow(
        `SES receives no mail in ${region}, so its receipt rule set cannot be made there: deploy to a region that receives, e.g. AWS_REGION=eu-west-1`,
      );
    }
  });

  it('lets a stack be synthesized where SES receives mail, and with no region at all', () => {
    expect(inRegion('eu-west-1', () => synthesized({})).stack.region).toBe('eu-west-1');
    // Environment-agnostic: the region is CloudFormation's AWS::Region, known only at deploy.
    expect(Token.isUnresolved(inRegion(undefined, () => synthesized({})).stack.region)).toBe(true);
  });
});

describe('the inbound domain', () => {
  it('stops the synth of prod without one, saying what to pass', () => {
    expect(() => buildApp(new App({ context: { stage: 'prod', 'aws:cdk:bundling-stacks': [] } }))).toThrow(
      'The prod stage needs the domain SES receives newsletters for: pass -c inboundDomain=mail.example.com',
    );
  });

  it('warns when a dev stack falls back to the placeholder, and says nothing when one is given', () => {
    const warningsOf = (context: Record<string, unknown>) => {
      const { stack } = buildApp(new App({ context: { ...context, 'aws:cdk:bundling-stacks': [] } }));
      return Annotations.fromStack(stack)
        .findWarning('*', Match.stringLikeRegexp('inboundDomain'))
        .map((w) => w.entry.data);
    };

    expect(warningsOf({})).toEqual([expect.stringContaining('No -c inboundDomain: SES receives mail for inbound.surge.example')]);
    expect(warningsOf({ inboundDomain: 'inbound.test.example' })).toEqual([]);
  });
});

describe('the feature flags', () => {
  it('are those a new `cdk init` app of the installed aws-cdk-lib sets, in cdk.json', () => {
    const read = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    expect(read('cdk.json').context).toEqual(read('node_modules/aws-cdk-lib/recommended-feature-flags.json'));
  });

  it('name the database proxy after its stack and path, not `Proxy`, which any other CDK proxy of the account and region may hold', () => {
    const proxy = Object.values(synthesized({}).resources).find((r) => r.Type === 'AWS::RDS::DBProxy')!;
    expect(proxy.Properties?.DBProxyName).toMatch(/^surgedev/i);
  });
});
