import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../infra/app';
import { CLUSTER_NODES_MAX } from '../../infra/redis';
import { LARGE_BODY_PATH_PREFIX } from '../../infra/stack/edge';
import { functions } from '../../functions/table';
import { synthesized as synthesizedStack, type Resource } from '../support/stack';

// Synthesis needs no credentials and no network; nothing may phone home or read a real profile.
process.env.HOME = mkdtempSync(join(tmpdir(), 'surge-cdk-'));
process.env.CDK_DISABLE_VERSION_CHECK = '1';
process.env.CDK_DISABLE_CLI_TELEMETRY = '1';

/** The parameter that turns each log type Aurora MySQL can export on; the error log is always written. */
const LOG_SWITCHES: Record<string, string> = { general: 'general_log', slowquery: 'slow_query_log', audit: 'server_audit_logging' };

/** A stack's template as `npm run synth` makes it (test/support/stack.ts), with one resource of a type picked out. */
function synthesized(context: Record<string, unknown>) {
  const { resources, idsOf } = synthesizedStack(context);
  const only = (type: string) => {
    const ids = idsOf(type);
    expect(ids, type).toHaveLength(1);
    return { id: ids[0]!, ...resources[ids[0]!]! };
  };
  return { resources, idsOf, only };
}

describe('the traps of a first deploy, in the prod stage with a Serverless cache', () => {
  let prod: ReturnType<typeof synthesized>;

  beforeAll(() => {
    prod = synthesized({ stage: 'prod', redis: 'serverless' });
  });

  it('lets the audits through the WAF with bodies over 8 KB, and blocks such bodies everywhere else', () => {
    const rules: Record<string, any>[] = prod.only('AWS::WAFv2::WebACL').Properties.Rules;
    const common = rules.find((r) => r.Statement.ManagedRuleGroupStatement?.Name === 'AWSManagedRulesCommonRuleSet')!;
    const audits = functions.flatMap((f) => (f.trigger.kind === 'http' && f.trigger.path.includes('/audit/') ? [f.trigger.path] : []));

    // The managed rule only counts (and labels) a large body; a rule after it blocks it outside the audits.
    expect(common.Statement.ManagedRuleGroupStatement.RuleActionOverrides).toEqual([{ Name: 'SizeRestrictions_BODY', ActionToUse: { Count: {} } }]);
    const large = rules.find((r) => r.Priority > common.Priority && JSON.stringify(r.Statement).includes('core-rule-set:SizeRestrictions_Body'))!;
    expect(large.Action).toEqual({ Block: {} });
    expect(large.Statement.AndStatement.Statements).toEqual([
      { LabelMatchStatement: { Scope: 'LABEL', Key: 'awswaf:managed:aws:core-rule-set:SizeRestrictions_Body' } },
      {
        NotStatement: {
          Statement: {
            ByteMatchStatement: {
              FieldToMatch: { UriPath: {} },
              PositionalConstraint: 'STARTS_WITH',
              SearchString: LARGE_BODY_PATH_PREFIX,
              TextTransformations: [{ Priority: 0, Type: 'NONE' }],
            },
          },
        },
      },
    ]);
    // Every audit route, and no other, is under the prefix.
    expect(audits).toHaveLength(2);
    const underPrefix = functions.flatMap((f) => (f.trigger.kind === 'http' && f.trigger.path.startsWith(LARGE_BODY_PATH_PREFIX) ? [f.trigger.path] : []));
    expect(underPrefix).toEqual(audits);
  });

  it('gives the Serverless cache’s user every channel, which the fill wake-ups’ sharded pub/sub needs (serverless-acl.test.ts)', () => {
    expect(prod.only('AWS::ElastiCache::User').Properties).toMatchObject({ UserName: 'default', AccessString: 'on ~* &* +@all' });
  });
});

describe('the traps of a first deploy, in the default stage and shape', () => {
  let dev: ReturnType<typeof synthesized>;

  beforeAll(() => {
    dev = synthesized({});
  });

  it('creates the password rotation schedule, whose first test signs in to the writer, only once the writer instance exists', () => {
    const schedule = dev.only('AWS::SecretsManager::RotationSchedule');
    const writer = dev.idsOf('AWS::RDS::DBInstance').filter((id) => id.startsWith('DatabaseWriter'));

    expect(writer).toHaveLength(1);
    expect(schedule.DependsOn).toContain(writer[0]);
  });

  it('lets SES write raw mail into the bucket for the receipt rule only, named by its ARN', () => {
    const rule = dev.only('AWS::SES::ReceiptRule');
    const bucket = dev.idsOf('AWS::S3::Bucket').find((id) => id.startsWith('RawMail'))!;
    const policy = Object.values(dev.resources).find((r) => r.Type === 'AWS::S3::BucketPolicy' && r.Properties.Bucket.Ref === bucket)!;
    const ses = (policy.Properties.PolicyDocument.Statement as Record<string, any>[]).filter((s) => s.Principal?.Service === 'ses.amazonaws.com');
    /** An Fn::Join as text, each Ref as <id>. */
    const text = (value: any): string => (typeof value === 'string' ? value : value.Ref ? `<${value.Ref}>` : value['Fn::Join'][1].map(text).join(''));

    expect(ses.map((s) => [s.Effect, s.Action])).toEqual([
      ['Allow', 's3:PutObject'],
      ['Deny', 's3:PutObject'],
    ]);
    const arn = text(ses[1]!.Condition.ArnNotEquals['aws:SourceArn']);
    const part = '(<[^>]+>|[^:]+)';
    expect(arn).toMatch(
      new RegExp(`^arn:${part}:ses:${part}:${part}:receipt-rule-set/<${rule.Properties.RuleSetName.Ref}>:receipt-rule/${rule.Properties.Rule.Name}$`),
    );
    expect(rule.Properties.Rule.Name).toBe('newsletters');
  });

  it('has IAM database authentication off at the cluster, as at the proxy, where the password is the way in', () => {
    const proxy = dev.only('AWS::RDS::DBProxy');

    expect(proxy.Properties.Auth).toEqual([expect.objectContaining({ AuthScheme: 'SECRETS', IAMAuth: 'DISABLED' })]);
    expect(dev.only('AWS::RDS::DBCluster').Properties.EnableIAMDatabaseAuthentication).toBe(false);
  });

  it('keeps every log group a month, the VPC flow log’s too', () => {
    const groups = dev.idsOf('AWS::Logs::LogGroup');

    expect(groups.filter((id) => id.startsWith('VpcFlowLogs'))).toHaveLength(1);
    for (const id of groups) expect(dev.resources[id]!.Properties.RetentionInDays, id).toBe(30);
  });

  it('exports only the database logs its parameter group turns on, to files, and not the general log', () => {
    const cluster = dev.only('AWS::RDS::DBCluster');
    const group = dev.only('AWS::RDS::DBClusterParameterGroup');
    const exported: string[] = cluster.Properties.EnableCloudwatchLogsExports;

    expect(cluster.Properties.DBClusterParameterGroupName).toEqual({ Ref: group.id });
    expect(group.Properties.Family).toBe('aurora-mysql8.0');
    expect(group.Properties.Parameters.log_output).toBe('FILE');
    expect(exported).toEqual(['error', 'slowquery', 'audit']);
    for (const type of exported.filter((t) => t !== 'error')) expect(group.Properties.Parameters[LOG_SWITCHES[type]!], type).toBe('1');
    // The audit log without each statement's reads and writes, the general log's volume.
    expect(group.Properties.Parameters.server_audit_events).toBe('CONNECT,QUERY_DDL,QUERY_DCL');
  });

  it("states the database's isolation level, REPEATABLE READ, which the writer's locked reads rely on", () => {
    expect(dev.only('AWS::RDS::DBClusterParameterGroup').Properties.Parameters.transaction_isolation).toBe('REPEATABLE-READ');
  });
});

describe('the size of a cluster-mode cache', () => {
  it('is refused at synth past 90 nodes, saying what was asked and what to pass', () => {
    expect(CLUSTER_NODES_MAX).toBe(90);
    expect(() => buildApp(new App({ context: { redis: 'cluster', redisShards: '46', redisReplicas: '1' } }))).toThrow(
      "-c redisShards=46 -c redisReplicas=1 asks for 92 cache nodes (shards × (1 + replicas)); the stack makes at most 90, ElastiCache's default quota per cluster: pass fewer shards or replicas",
    );
    expect(() => buildApp(new App({ context: { redis: 'cluster', redisShards: '500', redisReplicas: '5' } }))).toThrow('asks for 3000 cache nodes');
  });

  it('synthesizes at the cap, every node on the dashboard, within CloudFormation’s 1 MB', () => {
    const app = new App({
      context: { inboundDomain: 'inbound.test.example', redis: 'cluster', redisShards: '30', redisReplicas: '2', 'aws:cdk:bundling-stacks': [] },
    });
    const { stack } = buildApp(app);
    app.synth();
    const template = Template.fromStack(stack).toJSON();
    const dashboard = Object.values(template.Resources as Record<string, Resource>).find((r) => r.Type === 'AWS::CloudWatch::Dashboard')!;

    expect(JSON.stringify(dashboard.Properties.DashboardBody)).toContain('-0030-003');
    expect(JSON.stringify(template).length).toBeLessThan(1_000_000);
  });
});
