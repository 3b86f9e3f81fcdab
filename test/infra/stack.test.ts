import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../infra/app';
import type { SurgeStack } from '../../infra/stack';
import { pathPatternMatcher } from '../../infra/stack/edge-requests';
import { routesOfTable } from '../../infra/table-routes';
import { SESSION_COOKIE } from '../../shared/sessions/store';
import { synthesized as synthesizedStack, type Resource } from '../support/stack';
import { envNeedsOf, functions, inboundMail, queueNamesOf, queues, visibilityTimeoutSeconds, type EnvNeed, type QueueName } from '../../functions/table';
import { envNeeds, environmentFor, serviceEnvironment, type Deployment } from '../../shared/platform/config';

// Synthesis needs no credentials and no network; nothing may phone home or read a real profile.
process.env.HOME = mkdtempSync(join(tmpdir(), 'surge-cdk-'));
process.env.CDK_DISABLE_VERSION_CHECK = '1';
process.env.CDK_DISABLE_CLI_TELEMETRY = '1';

/** The log types the Aurora cluster exports, each to a group CloudFormation owns. */
const DATABASE_LOG_EXPORTS = ['error', 'slowquery', 'audit'];

/** A deployment that sets what the stack sets (every secret id), with the other optional settings left to their defaults. */
const awsLikeDeployment: Deployment = {
  redis: { url: 'rediss://cache.example:6380', authSecretId: 'redis-auth', replicaAcks: 1 },
  database: { url: 'mysql://proxy.example:3306/surge', secretId: 'database', tls: true },
  reservationQueueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/surge-reservations',
  reservationDlqUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/surge-reservations-dlq',
  cookieSecure: true,
  inboundDomain: 'inbound.test.example',
  rawMail: { bucket: 'surge-raw-mail', prefix: inboundMail.prefix, retentionDays: inboundMail.retentionDays },
  firstAdminSecretId: 'first-admin',
};
/** Set by the stack on every function, outside any need. */
const STACK_VARIABLES = Object.keys(serviceEnvironment);
const DYNAMIC_REFERENCE = /\{\{resolve:/g;

/** Who may reach the cache's security group, on which ports: each rule's source group by the start of its logical id. */
const redisIngressOf = (resources: Record<string, Resource>) => {
  const redisSg = Object.keys(resources).find(
    (id) => resources[id]!.Type === 'AWS::EC2::SecurityGroup' && resources[id]!.Properties.GroupDescription === 'ElastiCache, from functions only',
  )!;
  const inline = resources[redisSg]!.Properties.SecurityGroupIngress ?? [];
  const rules = Object.values(resources).filter((r) => r.Type === 'AWS::EC2::SecurityGroupIngress' && r.Properties.GroupId?.['Fn::GetAtt']?.[0] === redisSg);
  return [...inline, ...rules.map((r) => r.Properties)].map((rule: Record<string, any>) => ({
    from: rule.FromPort,
    to: rule.ToPort,
    source: String(rule.SourceSecurityGroupId?.['Fn::GetAtt']?.[0] ?? rule.CidrIp).replace(/[0-9A-F]{8}$/, ''),
  }));
};

/**
 * What holds data, or a name others rely on, by type: the property of its physical name where the
 * stack may set one. CloudFormation replaces a resource whose logical ID changes, data and all.
 */
const STATEFUL_NAME_PROPERTY: Record<string, string | undefined> = {
  'AWS::RDS::DBCluster': 'DBClusterIdentifier',
  'AWS::RDS::DBInstance': 'DBInstanceIdentifier',
  'AWS::RDS::DBProxy': 'DBProxyName',
  'AWS::ElastiCache::ReplicationGroup': 'ReplicationGroupId',
  'AWS::ElastiCache::ServerlessCache': 'ServerlessCacheName',
  'AWS::ElastiCache::User': 'UserId',
  'AWS::ElastiCache::UserGroup': 'UserGroupId',
  'AWS::ElastiCache::SubnetGroup': 'CacheSubnetGroupName',
  'AWS::ElastiCache::ParameterGroup': undefined,
  'AWS::SQS::Queue': 'QueueName',
  'AWS::S3::Bucket': 'BucketName',
  'AWS::SecretsManager::Secret': 'Name',
  'AWS::Logs::LogGroup': 'LogGroupName',
  'AWS::KMS::Key': undefined,
};
/** Each stateful resource of a template by logical ID: its type, and its physical name where set. */
const statefulIn = (resources: Record<string, Resource>): Record<string, string> =>
  Object.fromEntries(
    Object.entries(resources)
      .filter(([, r]) => r.Type in STATEFUL_NAME_PROPERTY)
      .map(([id, r]) => {
        const nameProperty = STATEFUL_NAME_PROPERTY[r.Type];
        const name: unknown = nameProperty && r.Properties[nameProperty];
        return [id, name === undefined ? r.Type : `${r.Type} ${typeof name === 'string' ? name : JSON.stringify(name)}`];
      }),
  );
/**
 * The dev stage's stateful resources but the cache's, pinned: a logical ID changing here (a
 * construct renamed or moved under another) is a resource CloudFormation would replace. A new
 * stateful resource is added here on purpose.
 */
const STATEFUL_DEV: Record<string, string> = {
  VpcFlowLogsE6FFDEF9: 'AWS::Logs::LogGroup',
  CustomVpcRestrictDefaultSGCustomResourceProviderLogs41F6175A: 'AWS::Logs::LogGroup',
  RedisAuthAF1E8ACD: 'AWS::SecretsManager::Secret',
  DatabaseLogserrorD7D59929: 'AWS::Logs::LogGroup /aws/rds/cluster/surge-dev/error',
  DatabaseLogsslowquery6574CBED: 'AWS::Logs::LogGroup /aws/rds/cluster/surge-dev/slowquery',
  DatabaseLogsaudit1883AB95: 'AWS::Logs::LogGroup /aws/rds/cluster/surge-dev/audit',
  SurgedevDatabaseSecret7EAA067A949e9864410406a8797c8999cb494bc2: 'AWS::SecretsManager::Secret',
  DatabaseB269D8BB: 'AWS::RDS::DBCluster surge-dev',
  DatabaseWriter7794273E: 'AWS::RDS::DBInstance',
  DatabaseReaderC663426B: 'AWS::RDS::DBInstance',
  DatabaseProxyE01FC4E6: 'AWS::RDS::DBProxy SurgedevDatabaseProxy5D0A1C1D',
  DatabaseRotationLogs7BE551B7: 'AWS::Logs::LogGroup /aws/lambda/SurgedevDatabaseRotationSingleUserA0495A7B',
  reservationsDlq8157243B: 'AWS::SQS::Queue surge-dev-reservations-dlq',
  reservationsQueue06778DEF: 'AWS::SQS::Queue surge-dev-reservations',
  AccessLogs8B620ECA: 'AWS::S3::Bucket',
  CustomS3AutoDeleteObjectsCustomResourceProviderLogsB8B1B8F2: 'AWS::Logs::LogGroup',
  RawMailA1B12CE5: 'AWS::S3::Bucket',
  AdminCredentialsCD1C0A3A: 'AWS::SecretsManager::Secret',
  ApiAccessLogsE9DF007D: 'AWS::Logs::LogGroup',
  healthLogsE8EEBAD2: 'AWS::Logs::LogGroup',
  getapidocumentLogs234699E3: 'AWS::Logs::LogGroup',
  getapidocsLogs1B4F278D: 'AWS::Logs::LogGroup',
  createsessionLogs1E6CB07C: 'AWS::Logs::LogGroup',
  createuserLogs5F06CAB8: 'AWS::Logs::LogGroup',
  deletecurrentsessionLogs4358CA91: 'AWS::Logs::LogGroup',
  deletewaitingroomLogsD03A06D3: 'AWS::Logs::LogGroup',
  deleteallsessionsLogs67737BAB: 'AWS::Logs::LogGroup',
  getmeLogs3A724806: 'AWS::Logs::LogGroup',
  putitemstockLogs5352EAE0: 'AWS::Logs::LogGroup',
  getitemLogsC14F77D4: 'AWS::Logs::LogGroup',
  createorderLogs5B65D058: 'AWS::Logs::LogGroup',
  putwaitingroomLogs472293D3: 'AWS::Logs::LogGroup',
  joinqueueLogs69BB371B: 'AWS::Logs::LogGroup',
  getqueuestatusLogsD07BDDE1: 'AWS::Logs::LogGroup',
  claimqueuepassLogsDD464A92: 'AWS::Logs::LogGroup',
  getwaitingpageLogsBE54AD8F: 'AWS::Logs::LogGroup',
  getorderLogs0B720D99: 'AWS::Logs::LogGroup',
  putdealLogs051F7836: 'AWS::Logs::LogGroup',
  getdealLogs88B38601: 'AWS::Logs::LogGroup',
  createcouponLogsE326CA20: 'AWS::Logs::LogGroup',
  listmycouponsLogs5D5FF44E: 'AWS::Logs::LogGroup',
  createloadtestbuyersLogsBF798FA8: 'AWS::Logs::LogGroup',
  auditsaleLogs3D020C4A: 'AWS::Logs::LogGroup',
  auditdealLogs8CFDD412: 'AWS::Logs::LogGroup',
  writereservationsLogs050C2C77: 'AWS::Logs::LogGroup',
  listprogramsLogs8EB696E8: 'AWS::Logs::LogGroup',
  createprogramLogsB9C2F6CD: 'AWS::Logs::LogGroup',
  updateprogramLogsACBFEBD0: 'AWS::Logs::LogGroup',
  receivemailLogsF8C0ABB8: 'AWS::Logs::LogGroup',
  receivemailFailures481E54F6: 'AWS::SQS::Queue surge-dev-receive-mail-failures',
  getinboxaddressLogs6682843D: 'AWS::Logs::LogGroup',
  rotateinboxaddressLogsE74A5131: 'AWS::Logs::LogGroup',
  listmynewslettersLogsF1F7D8B2: 'AWS::Logs::LogGroup',
  listmyinboxLogsAB321B50: 'AWS::Logs::LogGroup',
  getinboxissueLogsBBFDDD94: 'AWS::Logs::LogGroup',
  mutenewsletterLogs6130CA63: 'AWS::Logs::LogGroup',
  unmutenewsletterLogs06F3BFD9: 'AWS::Logs::LogGroup',
  getmyfeedsLogs30CE7AF1: 'AWS::Logs::LogGroup',
  revokefeedtokensLogs1CB79FED: 'AWS::Logs::LogGroup',
  rotatefeedtokenLogs0882B593: 'AWS::Logs::LogGroup',
  getatomfeedLogsC212F7D6: 'AWS::Logs::LogGroup',
  getjsonfeedLogsD57829CF: 'AWS::Logs::LogGroup',
  getfeedissueLogs1EDFD011: 'AWS::Logs::LogGroup',
  listmyquarantineLogs1215CBDD: 'AWS::Logs::LogGroup',
  releasequarantinedmailLogsCE6D1DBE: 'AWS::Logs::LogGroup',
  migratedatabaseLogsC0E8B867: 'AWS::Logs::LogGroup',
  AWSCDKTriggerCustomResourceProviderCustomResourceProviderLogs32401827: 'AWS::Logs::LogGroup',
  reconcilereservationsLogs30196825: 'AWS::Logs::LogGroup',
  ObservabilityAlarmsKey17F1BE5C: 'AWS::KMS::Key',
};
/** The cache in each shape: each has ids of its own, so switching shapes makes a new cache (infra/redis.ts). */
const STATEFUL_CACHE = {
  single: { RedisSubnets: 'AWS::ElastiCache::SubnetGroup', RedisParameters: 'AWS::ElastiCache::ParameterGroup', Redis: 'AWS::ElastiCache::ReplicationGroup' },
  cluster: {
    RedisSubnets: 'AWS::ElastiCache::SubnetGroup',
    RedisClusterParameters: 'AWS::ElastiCache::ParameterGroup',
    RedisCluster: 'AWS::ElastiCache::ReplicationGroup',
  },
  serverless: {
    RedisUser: 'AWS::ElastiCache::User surge-dev-default',
    RedisUsers: 'AWS::ElastiCache::UserGroup surge-dev',
    RedisServerless: 'AWS::ElastiCache::ServerlessCache surge-dev',
  },
};
/**
 * The prod stage's: named for prod (the database secret's logical ID, made by CDK from the stack's
 * name, too), without the load-test function and the buckets' emptying, with CloudFront's origin secret.
 */
const NOT_IN_PROD = [
  'createloadtestbuyersLogsBF798FA8',
  'CustomS3AutoDeleteObjectsCustomResourceProviderLogsB8B1B8F2',
  'SurgedevDatabaseSecret7EAA067A949e9864410406a8797c8999cb494bc2',
];
const STATEFUL_PROD: Record<string, string> = {
  ...Object.fromEntries(Object.entries(STATEFUL_DEV).filter(([id]) => !NOT_IN_PROD.includes(id))),
  DatabaseLogserrorD7D59929: 'AWS::Logs::LogGroup /aws/rds/cluster/surge-prod/error',
  DatabaseLogsslowquery6574CBED: 'AWS::Logs::LogGroup /aws/rds/cluster/surge-prod/slowquery',
  DatabaseLogsaudit1883AB95: 'AWS::Logs::LogGroup /aws/rds/cluster/surge-prod/audit',
  DatabaseB269D8BB: 'AWS::RDS::DBCluster surge-prod',
  SurgeprodDatabaseSecretBBA435D8949e9864410406a8797c8999cb494bc2: 'AWS::SecretsManager::Secret',
  DatabaseProxyE01FC4E6: 'AWS::RDS::DBProxy SurgeprodDatabaseProxyE99953B1',
  DatabaseRotationLogs7BE551B7: 'AWS::Logs::LogGroup /aws/lambda/SurgeprodDatabaseRotationSingleUserC4ECE5FC',
  reservationsDlq8157243B: 'AWS::SQS::Queue surge-prod-reservations-dlq',
  reservationsQueue06778DEF: 'AWS::SQS::Queue surge-prod-reservations',
  receivemailFailures481E54F6: 'AWS::SQS::Queue surge-prod-receive-mail-failures',
  OriginSecret5DDC59F1: 'AWS::SecretsManager::Secret',
  ...STATEFUL_CACHE.single,
};

describe('the CDK app', () => {
  let app: App;
  let template: Template;
  let resources: Record<string, Resource>;
  let assemblyDir: string;
  const ofType = (type: string) => Object.values(resources).filter((r) => r.Type === type);
  const logicalIdOf = (type: string, where: (r: Resource) => boolean = () => true) => {
    const ids = Object.keys(resources).filter((id) => resources[id]!.Type === type && where(resources[id]!));
    expect(ids, type).toHaveLength(1);
    return ids[0]!;
  };
  const functionIdOf = (id: string) => logicalIdOf('AWS::Lambda::Function', (r) => r.Properties.FunctionName === `surge-dev-${id}`);
  const functionOf = (id: string) => resources[functionIdOf(id)]!;
  const adminSecretId = () => logicalIdOf('AWS::SecretsManager::Secret', (r) => String(r.Properties.Description).startsWith("The first admin's"));
  /** The resources a resource's Ref, Fn::GetAtt and Fn::Sub name. */
  const referencesIn = (value: unknown): string[] => {
    if (typeof value === 'string') return [...value.matchAll(/\$\{([A-Za-z0-9]+)[.}]/g)].map((m) => m[1]!).filter((id) => id in resources);
    if (Array.isArray(value)) return value.flatMap(referencesIn);
    if (value === null || typeof value !== 'object') return [];
    const { Ref: ref, 'Fn::GetAtt': getAtt } = value as { Ref?: string; 'Fn::GetAtt'?: [string, string] };
    if (typeof ref === 'string') return ref in resources ? [ref] : [];
    if (getAtt) return [getAtt[0]];
    return Object.values(value).flatMap(referencesIn);
  };
  /** What CloudFormation must create or update before a resource: its DependsOn and references, transitively. */
  const waitsFor = (id: string, seen = new Set<string>()): Set<string> => {
    for (const next of [...(resources[id]!.DependsOn ?? []), ...referencesIn(resources[id]!.Properties)]) {
      if (seen.has(next)) continue;
      seen.add(next);
      waitsFor(next, seen);
    }
    return seen;
  };

  beforeAll(() => {
    ({ app } = buildApp(new App({ context: { inboundDomain: 'inbound.test.example', 'aws:cdk:enable-asset-metadata': true } })));
    // Throws if any cdk-nag AwsSolutions finding is left unacknowledged.
    assemblyDir = app.synth().directory;
    template = Template.fromStack(app.node.findChild('Surge-dev') as never);
    resources = template.toJSON().Resources;
  });

  it('keeps the logical ID and physical name of every stateful resource, so no deploy replaces one', () => {
    expect(statefulIn(resources)).toEqual({ ...STATEFUL_DEV, ...STATEFUL_CACHE.single });
  });

  it('has one ARM64 nodejs24.x function per table row, with the table’s memory and timeout', () => {
    const lambdas = ofType('AWS::Lambda::Function').filter((f) => String(f.Properties.FunctionName ?? '').startsWith('surge-'));
    expect(lambdas.map((f) => f.Properties.FunctionName).sort()).toEqual(functions.map((f) => `surge-dev-${f.id}`).sort());
    for (const spec of functions) {
      template.hasResourceProperties('AWS::Lambda::Function', {
        FunctionName: `surge-dev-${spec.id}`,
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        MemorySize: spec.memoryMb,
        Timeout: spec.timeoutSeconds,
        VpcConfig: Match.objectLike({ SubnetIds: Match.anyValue() }),
      });
    }
  });

  it('routes every HTTP trigger of the table, and nothing else', () => {
    const expected = functions.flatMap((f) => (f.trigger.kind === 'http' ? [`${f.trigger.method} ${f.trigger.path}`] : []));
    expect(
      ofType('AWS::ApiGatewayV2::Route')
        .map((r) => r.Properties.RouteKey)
        .sort(),
    ).toEqual(expected.sort());
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      DefaultRouteSettings: Match.objectLike({ ThrottlingRateLimit: Match.anyValue() }),
      AccessLogSettings: Match.objectLike({ DestinationArn: Match.anyValue() }),
    });
  });

  it('gives each queue a DLQ, TLS only, and a visibility of six times its consumer’s timeout', () => {
    for (const name of Object.keys(queues) as QueueName[]) {
      template.hasResourceProperties('AWS::SQS::Queue', {
        QueueName: queueNamesOf(name, 'surge-dev').queue,
        VisibilityTimeout: visibilityTimeoutSeconds(name),
        RedrivePolicy: { deadLetterTargetArn: Match.anyValue(), maxReceiveCount: queues[name].maxReceiveCount },
      });
    }
    const policies = ofType('AWS::SQS::QueuePolicy');
    // Each table queue and its DLQ, and each SES function's failure queue.
    expect(policies).toHaveLength(2 * Object.keys(queues).length + functions.filter((f) => f.trigger.kind === 'ses').length);
    expect(policies.every((p) => JSON.stringify(p.Properties).includes('aws:SecureTransport'))).toBe(true);
    // Read from the template, not the table's formula: each mapping's queue against its function.
    const mappings = ofType('AWS::Lambda::EventSourceMapping');
    expect(mappings).toHaveLength(functions.filter((f) => f.trigger.kind === 'queue').length);
    for (const mapping of mappings) {
      const fn = resources[mapping.Properties.FunctionName.Ref]!;
      const queue = resources[mapping.Properties.EventSourceArn['Fn::GetAtt'][0]]!;
      expect(queue.Properties.VisibilityTimeout, queue.Properties.QueueName).toBeGreaterThanOrEqual(6 * fn.Properties.Timeout);
    }
    for (const spec of functions) {
      if (spec.trigger.kind !== 'queue') continue;
      template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        BatchSize: spec.trigger.batchSize,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        ScalingConfig: { MaximumConcurrency: Match.anyValue() },
      });
    }
  });

  it('runs Redis with TLS, AUTH, failover and a non-default port', () => {
    template.hasResourceProperties('AWS::ElastiCache::ReplicationGroup', {
      TransitEncryptionEnabled: true,
      AtRestEncryptionEnabled: true,
      AuthToken: Match.anyValue(),
      MultiAZEnabled: true,
      AutomaticFailoverEnabled: true,
      Port: Match.not(6379),
    });
  });

  it('runs the single shape by default: one primary and one replica, cluster mode off, its primary endpoint in the functions’ environment', () => {
    const groupId = logicalIdOf('AWS::ElastiCache::ReplicationGroup');
    const group = resources[groupId]!.Properties;

    expect(groupId).toBe(logicalIdOf('AWS::ElastiCache::ReplicationGroup', (r) => r.Properties.NumCacheClusters === 2));
    expect(group).not.toHaveProperty('NumNodeGroups');
    expect(group).not.toHaveProperty('ClusterMode');
    expect(ofType('AWS::ElastiCache::ServerlessCache')).toEqual([]);
    expect(redisIngressOf(resources)).toEqual([{ from: 6380, to: 6380, source: 'LambdaSg' }]);
    for (const spec of functions.filter((f) => envNeedsOf(f).includes('redis'))) {
      const variables = functionOf(spec.id).Properties.Environment.Variables;
      expect(variables.REDIS_URL, spec.id).toEqual({ 'Fn::Join': ['', ['rediss://', { 'Fn::GetAtt': [groupId, 'PrimaryEndPoint.Address'] }, ':6380']] });
      expect(variables, spec.id).not.toHaveProperty('REDIS_CLUSTER');
    }
  });

  it('evicts nothing from the cache, and reserves memory beyond the data for backups, replication and clients', () => {
    const parameters = logicalIdOf('AWS::ElastiCache::ParameterGroup');
    expect(resources[parameters]!.Properties).toMatchObject({
      CacheParameterGroupFamily: 'valkey8',
      Properties: { 'maxmemory-policy': 'noeviction', 'reserved-memory-percent': '30' },
    });
    template.hasResourceProperties('AWS::ElastiCache::ReplicationGroup', {
      Engine: 'valkey',
      EngineVersion: Match.stringLikeRegexp('^8\\.'),
      CacheParameterGroupName: { Ref: parameters },
    });
  });

  it('puts RDS Proxy with TLS in front of an encrypted Aurora MySQL Serverless v2 cluster', () => {
    template.hasResourceProperties('AWS::RDS::DBProxy', { RequireTLS: true, EngineFamily: 'MYSQL' });
    template.hasResourceProperties('AWS::RDS::DBCluster', {
      Engine: 'aurora-mysql',
      StorageEncrypted: true,
      BackupRetentionPeriod: 7,
      ServerlessV2ScalingConfiguration: Match.anyValue(),
    });
    const functionEnv = JSON.stringify(ofType('AWS::Lambda::Function').map((f) => f.Properties.Environment));
    expect(functionEnv).toContain('DATABASE_TLS');
    // Source maps ship with each function but are not loaded at every cold start.
    expect(functionEnv).not.toContain('--enable-source-maps');
  });

  it('rotates the database password every 30 days, from its first scheduled window, with the generated password’s alphabet', () => {
    const [schedule, ...others] = ofType('AWS::SecretsManager::RotationSchedule');
    const [rotation] = ofType('AWS::Serverless::Application');
    const attachment = resources[logicalIdOf('AWS::SecretsManager::SecretTargetAttachment')]!;
    const generated = resources[attachment.Properties.SecretId.Ref]!;

    expect(others).toEqual([]);
    expect(schedule!.Properties).toMatchObject({
      SecretId: { Ref: logicalIdOf('AWS::SecretsManager::SecretTargetAttachment') },
      RotationRules: { ScheduleExpression: 'rate(30 days)' },
      RotateImmediatelyOnUpdate: false,
    });
    expect(rotation!.Properties.Parameters.excludeCharacters).toBe(generated.Properties.GenerateSecretString.ExcludeCharacters);
  });

  it('keeps every secret out of the functions’ configuration', () => {
    for (const spec of functions) {
      const variables = functionOf(spec.id).Properties.Environment.Variables as Record<string, unknown>;
      for (const [name, value] of Object.entries(variables)) {
        // A secret's value reaches a template only as a dynamic reference, bare or inside an Fn::Join.
        expect(JSON.stringify(value), `${spec.id} ${name}`).not.toMatch(DYNAMIC_REFERENCE);
      }
      // No user or password in a URL's authority.
      for (const url of ['REDIS_URL', 'DATABASE_URL']) expect(JSON.stringify(variables[url] ?? ''), `${spec.id} ${url}`).not.toContain('@');
    }
  });

  it('resolves a secret only where a resource needs its value: the cache’s AUTH token and the cluster’s master password', () => {
    const referencesByType: Record<string, number> = {};
    for (const resource of Object.values(resources)) {
      const count = JSON.stringify(resource).match(DYNAMIC_REFERENCE)?.length ?? 0;
      if (count) referencesByType[resource.Type] = (referencesByType[resource.Type] ?? 0) + count;
    }

    expect(referencesByType).toEqual({ 'AWS::ElastiCache::ReplicationGroup': 1, 'AWS::RDS::DBCluster': 1 });
    expect(JSON.stringify(template.toJSON()).match(DYNAMIC_REFERENCE)).toHaveLength(2);
  });

  it('sets each function’s environment from the shared map of its needs, and nothing else', () => {
    for (const spec of functions) {
      const names = Object.keys(functionOf(spec.id).Properties.Environment.Variables);

      expect(names.sort(), spec.id).toEqual([...STACK_VARIABLES, ...Object.keys(environmentFor(envNeedsOf(spec), awsLikeDeployment))].sort());
      for (const name of names.filter((n) => !STACK_VARIABLES.includes(n))) {
        expect(
          envNeedsOf(spec).some((need) => name in envNeeds[need].shape),
          `${spec.id} ${name} is read by one of its needs`,
        ).toBe(true);
      }
    }
  });

  it('lets each function read exactly the secrets its needs name, and names them in its environment', () => {
    const secretOf: Partial<Record<EnvNeed, { variable: string; ref: { Ref: string } }>> = {
      redis: {
        variable: 'REDIS_AUTH_SECRET_ID',
        ref: { Ref: logicalIdOf('AWS::SecretsManager::Secret', (r) => r.Properties.Description === 'ElastiCache AUTH token') },
      },
      database: { variable: 'DATABASE_SECRET_ID', ref: { Ref: logicalIdOf('AWS::SecretsManager::SecretTargetAttachment') } },
      firstAdmin: { variable: 'FIRST_ADMIN_SECRET_ID', ref: { Ref: adminSecretId() } },
    };
    for (const spec of functions) {
      const fn = functionOf(spec.id);
      const role = fn.Properties.Role['Fn::GetAtt'][0] as string;
      const readable = ofType('AWS::IAM::Policy')
        .filter((p) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === role))
        .flatMap((p) => p.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[])
        .filter((s) => [s.Action].flat().some((a) => a.startsWith('secretsmanager:')))
        // One statement may name several secrets (the minimizePolicies flag merges those of the same actions).
        .flatMap((s) => [s.Resource].flat().map((secret) => ({ actions: [s.Action].flat(), secret })));
      const expected = envNeedsOf(spec).flatMap((need) => secretOf[need] ?? []);

      expect(readable, spec.id).toHaveLength(expected.length);
      expect(readable, spec.id).toEqual(
        expect.arrayContaining(expected.map((s) => ({ actions: expect.arrayContaining(['secretsmanager:GetSecretValue']), secret: s.ref }))),
      );
      for (const { variable, ref } of expected) expect(fn.Properties.Environment.Variables[variable], `${spec.id} ${variable}`).toEqual(ref);
    }
  });

  it("generates the first admin's credentials for the default address, lets only the deploy trigger read them, and outputs where they are", () => {
    const secretId = adminSecretId();
    const readers = ofType('AWS::IAM::Policy')
      .filter((p) => JSON.stringify(p.Properties.PolicyDocument).includes(JSON.stringify({ Ref: secretId })))
      .flatMap((p) => (p.Properties.Roles as { Ref: string }[]).map((r) => r.Ref));
    const roleOf = (id: string) => functionOf(id).Properties.Role['Fn::GetAtt'][0] as string;

    expect(resources[secretId]!.Properties.GenerateSecretString).toMatchObject({
      SecretStringTemplate: JSON.stringify({ email: 'admin@inbound.test.example' }),
      GenerateStringKey: 'password',
      PasswordLength: 32,
    });
    expect(readers).toEqual([roleOf('migrate-database')]);
    expect(template.toJSON().Outputs.AdminSecretArn).toMatchObject({ Value: { Ref: secretId } });
  });

  it('runs reconciliation every 5 minutes and migrations on every deploy', () => {
    template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(5 minutes)' });
    expect(ofType('Custom::Trigger')).toHaveLength(1);
  });

  it('migrates on every deploy before any other function or the API stage can take traffic, and waits out the migration', () => {
    const migrate = functions.find((f) => f.trigger.kind === 'deploy')!;
    const triggerId = logicalIdOf('Custom::Trigger');
    const trigger = resources[triggerId]!;
    const stageId = logicalIdOf('AWS::ApiGatewayV2::Stage');
    const servingIds = functions.filter((f) => f !== migrate).map((f) => functionIdOf(f.id));
    // What starts functions besides the API: queue mappings, schedules, receipt rules, each naming its function.
    const starters = Object.keys(resources).filter((id) =>
      ['AWS::Lambda::EventSourceMapping', 'AWS::Events::Rule', 'AWS::SES::ReceiptRule'].includes(resources[id]!.Type),
    );

    expect(Number(trigger.Properties.Timeout)).toBeGreaterThan(migrate.timeoutSeconds * 1000);
    expect(trigger.Properties.ExecuteOnHandlerChange).toBe(true);
    // None of them can also come before the trigger: Template.fromStack refuses a dependency cycle.
    for (const id of [...servingIds, stageId]) expect(resources[id]!.DependsOn, id).toContain(triggerId);
    expect(starters).not.toEqual([]);
    for (const id of starters) expect(waitsFor(id).has(triggerId), id).toBe(true);
    expect([...waitsFor(triggerId)]).toEqual(expect.arrayContaining([logicalIdOf('AWS::RDS::DBCluster'), logicalIdOf('AWS::RDS::DBProxy')]));
  });

  it('stores inbound mail in an encrypted, private bucket, then invokes the mail function (S3 before Lambda)', () => {
    const [rule] = ofType('AWS::SES::ReceiptRule');
    const actions = rule!.Properties.Rule.Actions as Record<string, any>[];
    expect(rule!.Properties.Rule).toMatchObject({ Recipients: ['inbound.test.example'], ScanEnabled: true, Enabled: true });
    expect(actions.map((a) => Object.keys(a)[0])).toEqual(['S3Action', ...functions.filter((f) => f.trigger.kind === 'ses').map(() => 'LambdaAction')]);
    expect(actions[0]!.S3Action.ObjectKeyPrefix).toBe(inboundMail.prefix);
    expect(actions[1]!.LambdaAction).toMatchObject({ InvocationType: 'Event' });

    const bucketId = actions[0]!.S3Action.BucketName.Ref as string;
    const bucket = resources[bucketId]!.Properties;
    expect(bucket.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault.SSEAlgorithm).toBe('AES256');
    expect(bucket.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(bucket.LifecycleConfiguration.Rules).toContainEqual(
      expect.objectContaining({ ExpirationInDays: inboundMail.retentionDays, Prefix: inboundMail.prefix, Status: 'Enabled' }),
    );
    const policy = JSON.stringify(ofType('AWS::S3::BucketPolicy').find((p) => p.Properties.Bucket.Ref === bucketId)!.Properties.PolicyDocument);
    expect(policy).toContain('ses.amazonaws.com');
    expect(policy).toContain('aws:SecureTransport');
    template.hasResourceProperties('AWS::Lambda::Permission', { Principal: 'ses.amazonaws.com', Action: 'lambda:InvokeFunction' });
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      MaximumRetryAttempts: 2,
      DestinationConfig: { OnFailure: { Destination: Match.anyValue() } },
    });
  });

  const assetOf = (id: string) => {
    const fn = Object.values(resources).find((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.FunctionName === `surge-dev-${id}`)!;
    return join(assemblyDir, fn.Metadata!['aws:asset:path']!);
  };

  it("ships the mail function's parser thread beside its bundle", () => {
    expect(existsSync(join(assetOf('receive-mail'), 'index.mjs'))).toBe(true);
    expect(existsSync(join(assetOf('receive-mail'), 'parse-worker.mjs'))).toBe(true);
  });

  it('ships every migration in the migrate function’s bundle, so a new one makes the new version the trigger runs', () => {
    const migrations = readdirSync(join(import.meta.dirname, '../../shared/platform/db/migrations')).filter((f) => f.endsWith('.sql'));
    const version = resources[resources[logicalIdOf('Custom::Trigger')]!.Properties.HandlerArn.Ref]!;

    expect(readdirSync(join(assetOf('migrate-database'), 'migrations')).sort()).toEqual(migrations.sort());
    expect(version.Type).toBe('AWS::Lambda::Version');
    expect(version.Properties.FunctionName).toEqual({ Ref: functionIdOf('migrate-database') });
  });

  it('bundles the AWS SDK into the functions rather than importing the runtime’s', () => {
    const bundle = readFileSync(join(assetOf('create-order'), 'index.mjs'), 'utf8');

    expect(bundle).toContain('SendMessageBatch');
    expect(bundle).not.toMatch(/from\s*["']@aws-sdk\//);
  });

  it('grants no wildcard actions', () => {
    const actions = ofType('AWS::IAM::Policy').flatMap((p) =>
      (p.Properties.PolicyDocument.Statement as { Action: string | string[] }[]).flatMap((s) => [s.Action].flat()),
    );
    expect(actions.filter((a) => a === '*' || a.endsWith(':*'))).toEqual([]);
  });

  it('exports each Aurora log to a group of the stack, named as RDS names it and made before the cluster', () => {
    const cluster = resources[logicalIdOf('AWS::RDS::DBCluster')]!;
    const groupIdOf = (name: string) => logicalIdOf('AWS::Logs::LogGroup', (r) => r.Properties.LogGroupName === name);

    expect(cluster.Properties.EnableCloudwatchLogsExports).toEqual(DATABASE_LOG_EXPORTS);
    for (const type of DATABASE_LOG_EXPORTS) {
      expect(cluster.DependsOn, type).toContain(groupIdOf(`/aws/rds/cluster/${cluster.Properties.DBClusterIdentifier}/${type}`));
    }
    expect(ofType('Custom::LogRetention')).toEqual([]);
  });

  it('has every function, CDK’s helpers and the password rotation’s included, log to a group of the stack', () => {
    for (const [id, fn] of Object.entries(resources).filter(([, r]) => r.Type === 'AWS::Lambda::Function')) {
      expect(resources[fn.Properties.LoggingConfig?.LogGroup?.Ref]?.Type, id).toBe('AWS::Logs::LogGroup');
    }
    const [rotation] = ofType('AWS::Serverless::Application');
    const rotationLogs = logicalIdOf('AWS::Logs::LogGroup', (r) => r.Properties.LogGroupName === `/aws/lambda/${rotation!.Properties.Parameters.functionName}`);
    expect(rotation!.DependsOn).toContain(rotationLogs);
  });

  it('throttles each route the table throttles (sign-in, sign-up) at its own rate, below the stage’s', () => {
    const [stage] = ofType('AWS::ApiGatewayV2::Stage');
    const throttled = functions.flatMap((f) =>
      f.trigger.kind === 'http' && f.trigger.throttle ? [[`${f.trigger.method} ${f.trigger.path}`, f.trigger.throttle] as const] : [],
    );

    expect(throttled.map(([key]) => key).sort()).toEqual(['POST /sessions', 'POST /users']);
    expect(stage!.Properties.RouteSettings).toEqual(
      Object.fromEntries(throttled.map(([key, t]) => [key, { ThrottlingRateLimit: t.rateLimit, ThrottlingBurstLimit: t.burstLimit }])),
    );
    for (const [, t] of throttled) expect(t.rateLimit).toBeLessThan(stage!.Properties.DefaultRouteSettings.ThrottlingRateLimit);
    // The stage names the routes in its settings, so CloudFormation makes them first.
    const routeIds = Object.keys(resources).filter(
      (id) => resources[id]!.Type === 'AWS::ApiGatewayV2::Route' && throttled.some(([key]) => resources[id]!.Properties.RouteKey === key),
    );
    expect(routeIds).toHaveLength(2);
    for (const id of routeIds) expect(waitsFor(logicalIdOf('AWS::ApiGatewayV2::Stage'))).toContain(id);
  });

  it('gives up waiting for a proxy connection before any function using the database times out', () => {
    const [proxy] = ofType('AWS::RDS::DBProxyTargetGroup');
    const borrowTimeout = proxy!.Properties.ConnectionPoolConfigurationInfo.ConnectionBorrowTimeout;

    for (const spec of functions.filter((f) => f.env.includes('database'))) expect(borrowTimeout, spec.id).toBeLessThan(spec.timeoutSeconds);
  });

  it('keeps each capped route’s burst within its cap, so clients meet API Gateway’s 429 rather than a throttled Lambda’s 500', () => {
    const cappedRoutes = functions.filter((f) => f.trigger.kind === 'http' && f.concurrencyCap !== undefined);

    expect(cappedRoutes.map((f) => f.id)).toEqual(['create-session']);
    const [stage] = ofType('AWS::ApiGatewayV2::Stage');
    for (const spec of cappedRoutes) {
      const key = spec.trigger.kind === 'http' ? `${spec.trigger.method} ${spec.trigger.path}` : '';
      expect(stage!.Properties.RouteSettings[key]?.ThrottlingBurstLimit, spec.id).toBeLessThanOrEqual(spec.concurrencyCap!);
    }
  });

  it('caps sign-in, the mail function and the writer (at least its mapping’s concurrency), but reserves nothing unless asked', () => {
    const capped = Object.fromEntries(functions.flatMap((f) => (f.concurrencyCap ? [[f.id, f.concurrencyCap]] : [])));
    const writer = functions.find((f) => f.id === 'write-reservations')!;
    const [mapping] = ofType('AWS::Lambda::EventSourceMapping');

    expect(Object.keys(capped).sort()).toEqual(['create-session', 'receive-mail', 'write-reservations']);
    expect(writer.concurrencyCap).toBeGreaterThanOrEqual(mapping!.Properties.ScalingConfig.MaximumConcurrency);
    expect(ofType('AWS::Lambda::Function').filter((f) => 'ReservedConcurrentExecutions' in f.Properties)).toEqual([]);
  });

  /** Each alarm by the id its description names (its runbook heading in docs/runbook.md). */
  const alarmsById = (): Record<string, Resource> =>
    Object.fromEntries(
      ofType('AWS::CloudWatch::Alarm').map((a) => [/Runbook: docs\/runbook\.md, "Alarms", ([\w-]+)\./.exec(a.Properties.AlarmDescription)?.[1], a]),
    );
  const alarmsTopicId = () => logicalIdOf('AWS::SNS::Topic', (r) => r.Properties.DisplayName === 'Surge alarms');

  it('alarms on what should wake someone, and only that: dead letters, queue age, 5xx rate, the cache, the writer, the guard', () => {
    expect(Object.keys(alarmsById()).sort()).toEqual(
      [
        'reservationsDlqDepth',
        'reservationsQueueAge',
        'MailFailuresDepth',
        'Api5xxRate',
        'RedisMemory',
        'RedisWritesRefused',
        'WriterThrottles',
        'write-reservationsErrors',
        'reconcile-reservationsErrors',
        'receive-mailErrors',
        'GuardRejections',
        'HandOffFailures',
        'StoredWithoutOutbox',
      ].sort(),
    );
    const alarm = alarmsById();
    const metricNames = (id: string) => JSON.stringify(alarm[id]!.Properties.Metrics ?? alarm[id]!.Properties.MetricName);
    expect(alarm.Api5xxRate!.Properties).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanThreshold' });
    expect(metricNames('Api5xxRate')).toMatch(/"MetricName":"5xx".*"MetricName":"Count"|"MetricName":"Count".*"MetricName":"5xx"/);
    // Both nodes, primary and replica, whichever is the primary after a failover.
    expect(metricNames('RedisMemory').match(/"MetricName":"DatabaseMemoryUsagePercentage"/g)).toHaveLength(2);
    expect(metricNames('RedisMemory')).toMatch(/-001".*-002"/);
    expect(metricNames('GuardRejections')).toContain('orders.guardRejected');
    expect(metricNames('GuardRejections')).toContain('coupons.guardRejected');
    expect(metricNames('HandOffFailures')).toMatch(/orders.handOffCompensated.*coupons.handOffCompensated/);
    expect(alarm.reservationsQueueAge!.Properties).toMatchObject({ MetricName: 'ApproximateAgeOfOldestMessage', Threshold: 120, EvaluationPeriods: 5 });
  });

  it('sends every alarm, and its recovery, to the alarms topic: encrypted with a key CloudWatch may use, TLS only, e-mailing nobody unless asked', () => {
    const topic = alarmsTopicId();
    for (const [id, alarm] of Object.entries(alarmsById())) {
      expect(alarm.Properties.AlarmActions, id).toEqual([{ Ref: topic }]);
      expect(alarm.Properties.OKActions, id).toEqual([{ Ref: topic }]);
    }
    const key = resources[topic]!.Properties.KmsMasterKeyId['Fn::GetAtt'][0];
    expect(JSON.stringify(resources[key]!.Properties.KeyPolicy)).toContain('cloudwatch.amazonaws.com');
    expect(resources[key]!.Properties.EnableKeyRotation).toBe(true);
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      Topics: [{ Ref: topic }],
      PolicyDocument: Match.objectLike({
        Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
      }),
    });
    expect(ofType('AWS::SNS::Subscription')).toEqual([]);
  });

  it('has a runbook in docs/runbook.md for every alarm', () => {
    const readme = readFileSync('docs/runbook.md', 'utf8');
    for (const id of Object.keys(alarmsById())) expect(readme, id).toContain(`#### \`${id}\``);
  });

  it('draws the sale, the queue, every function, the cache, the database and the API on one dashboard', () => {
    const body = ofType('AWS::CloudWatch::Dashboard')[0]!.Properties.DashboardBody as { 'Fn::Join': [string, unknown[]] };
    const widgets = (
      JSON.parse(body['Fn::Join'][1].map((part) => (typeof part === 'string' ? part : 'TOKEN')).join('')) as {
        widgets: { type: string; properties: { title?: string } }[];
      }
    ).widgets;
    const graph = (title: string) => JSON.stringify(widgets.find((w) => w.properties.title === title));
    expect(widgets.filter((w) => w.type === 'metric').map((w) => w.properties.title)).toEqual([
      'Orders per second, by outcome',
      'Coupons per second, by outcome',
      'Writer lag, reserved → stored (ms)',
      'Reservation queue: depth and age of the oldest message (s)',
      'Dead letters',
      'Guard rejections, stored without outbox, compensated hand-offs',
      'Errors per function',
      'Throttles per function',
      'Concurrency per function',
      'Cache CPU (engine, %)',
      'Cache memory used (%)',
      'Cache evictions and replication lag (s)',
      'Catalog cache',
      'Aurora and RDS Proxy connections',
      'Mail, by outcome',
      'Waiting rooms: joined, admitted, claimed, converted',
      'Waiting rooms: passes expired, places lost',
      'Waiting rooms: waiting, and the oldest wait (ms)',
      'API 4xx and 5xx',
      'API latency (ms)',
      'API requests per second',
    ]);
    for (const outcome of ['accepted', 'soldOut', 'limitExceeded', 'rateLimited'])
      expect(graph('Orders per second, by outcome')).toContain(`"orders.${outcome}"`);
    expect(graph('Writer lag, reserved → stored (ms)')).toContain('"orders.writerLag"');
    for (const what of ['Errors', 'Throttles', 'ConcurrentExecutions']) {
      expect(graph(`${what === 'ConcurrentExecutions' ? 'Concurrency' : what} per function`).match(new RegExp(`"${what}"`, 'g'))).toHaveLength(
        functions.length,
      );
    }
    expect(graph('Cache evictions and replication lag (s)')).toMatch(/"Evictions".*"ReplicationLag"/);
    expect(graph('Aurora and RDS Proxy connections')).toMatch(/"DatabaseConnections".*"ClientConnections"/);
    expect(graph('API 4xx and 5xx')).toMatch(/"4xx".*"5xx"/);
    expect(graph('API latency (ms)')).toContain('"Latency"');
    for (const event of ['joined', 'admitted', 'claimed', 'converted'])
      expect(graph('Waiting rooms: joined, admitted, claimed, converted')).toContain(`"room.${event}"`);
    expect(graph('Waiting rooms: waiting, and the oldest wait (ms)')).toMatch(/"room.waiting".*"room.oldestWait"/);
  });

  it('leaves CloudFront out of dev, whose API serves requests straight from API Gateway', () => {
    expect(ofType('AWS::CloudFront::Distribution')).toEqual([]);
    expect(ofType('AWS::WAFv2::WebACL')).toEqual([]);
    for (const spec of functions) expect(functionOf(spec.id).Properties.Environment.Variables, spec.id).not.toHaveProperty('ORIGIN_SECRET_ID');
  });

  describe('in the dev stage, the default', () => {
    it('says so in its tag and description', () => {
      const stack = app.node.findChild('Surge-dev') as SurgeStack;
      expect(stack.tags.tagValues()).toMatchObject({ stage: 'dev' });
      expect(template.toJSON().Description).toContain('(dev)');
    });

    it('keeps nothing when CloudFormation deletes a resource, so a failed first deploy rolls back to nothing', () => {
      const kept = Object.entries(resources).filter(([, r]) => (r.DeletionPolicy ?? 'Delete') !== 'Delete' || (r.UpdateReplacePolicy ?? 'Delete') !== 'Delete');
      expect(kept.map(([id, r]) => `${id} ${r.DeletionPolicy}/${r.UpdateReplacePolicy}`)).toEqual([]);
      // CloudFormation's own default is Delete but for RDS (Snapshot); what holds data says Delete itself.
      const stateful = [
        'AWS::Logs::LogGroup',
        'AWS::S3::Bucket',
        'AWS::SecretsManager::Secret',
        'AWS::RDS::DBCluster',
        'AWS::RDS::DBInstance',
        'AWS::ElastiCache::ReplicationGroup',
      ];
      for (const type of stateful) {
        expect(
          ofType(type).map((r) => r.DeletionPolicy),
          type,
        ).toEqual(ofType(type).map(() => 'Delete'));
      }
    });

    it('deletes the VPC flow log’s group, which CDK would otherwise make and retain', () => {
      const [flowLog] = ofType('AWS::EC2::FlowLog');
      expect(resources[flowLog!.Properties.LogGroupName.Ref]).toMatchObject({ Type: 'AWS::Logs::LogGroup', DeletionPolicy: 'Delete' });
    });

    it('lets CloudFormation delete the Aurora cluster', () => {
      template.hasResourceProperties('AWS::RDS::DBCluster', { DeletionProtection: false });
    });

    it('empties each bucket before CloudFormation deletes it', () => {
      const emptied = ofType('Custom::S3AutoDeleteObjects').map((r) => r.Properties.BucketName.Ref);
      expect(emptied.sort()).toEqual(
        Object.keys(resources)
          .filter((id) => resources[id]!.Type === 'AWS::S3::Bucket')
          .sort(),
      );
    });
  });
});

describe('the CDK app in the prod stage', () => {
  let stack: SurgeStack;
  let resources: Record<string, Resource>;
  const ofType = (type: string) => Object.values(resources).filter((r) => r.Type === type);
  const functionOf = (id: string) => ofType('AWS::Lambda::Function').find((r) => r.Properties.FunctionName === `surge-prod-${id}`)!;
  const deployed = functions.filter((f) => !f.loadTest);

  beforeAll(() => {
    // The template is the dev stage's but for what it keeps and CloudFront, so the functions need not be bundled again.
    // Reservations are asked for here too, to check them without a third synth.
    // And the alarms' e-mail, for the same reason.
    const app = new App({
      context: {
        stage: 'prod',
        inboundDomain: 'inbound.test.example',
        reservedConcurrency: 'true',
        alarmEmail: 'ops@example.com',
        'aws:cdk:bundling-stacks': [],
      },
    });
    ({ stack } = buildApp(app));
    // Throws if any cdk-nag AwsSolutions finding is left unacknowledged.
    app.synth();
    resources = Template.fromStack(stack).toJSON().Resources;
  });

  it('says so in its tag and description', () => {
    expect(stack.tags.tagValues()).toMatchObject({ stage: 'prod' });
    expect(Template.fromStack(stack).toJSON().Description).toContain('(prod)');
  });

  it('protects the Aurora cluster from deletion, and snapshots it and the cache when deleted or replaced', () => {
    const [cluster] = ofType('AWS::RDS::DBCluster');
    expect(cluster!.Properties.DeletionProtection).toBe(true);
    for (const store of [cluster!, ...ofType('AWS::ElastiCache::ReplicationGroup')]) {
      expect([store.Type, store.DeletionPolicy, store.UpdateReplacePolicy]).toEqual([store.Type, 'Snapshot', 'Snapshot']);
    }
  });

  it('leaves out the functions that prepare load tests, so their routes do not exist', () => {
    const loadTests = functions.filter((f) => f.loadTest);
    const routes = ofType('AWS::ApiGatewayV2::Route').map((r) => r.Properties.RouteKey);

    expect(loadTests.map((f) => f.id)).toEqual(['create-load-test-buyers']);
    expect(ofType('AWS::Lambda::Function').map((r) => r.Properties.FunctionName)).toEqual(expect.arrayContaining(deployed.map((f) => `surge-prod-${f.id}`)));
    for (const spec of loadTests) {
      expect(functionOf(spec.id), spec.id).toBeUndefined();
      if (spec.trigger.kind === 'http') expect(routes).not.toContain(`${spec.trigger.method} ${spec.trigger.path}`);
    }
    expect(routes).toContain('POST /admin/audit/items/{itemId}');
  });

  it('keeps the logical ID and physical name of every stateful resource, so no deploy replaces one', () => {
    expect(statefulIn(resources)).toEqual(STATEFUL_PROD);
  });

  it('is in us-east-1, where CloudFront’s web ACLs are', () => {
    expect(stack.region).toBe('us-east-1');
  });

  it('puts CloudFront with a WAF web ACL in front of the API: a rate limit per address and AWS’s common rule set', () => {
    const [acl] = ofType('AWS::WAFv2::WebACL');
    const [distribution] = ofType('AWS::CloudFront::Distribution');

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
    expect(distribution!.Properties.DistributionConfig.WebACLId).toEqual({ 'Fn::GetAtt': [Object.keys(resources).find((id) => resources[id] === acl), 'Arn'] });
  });

  it('sends the API, over TLS, a generated secret as its origin header, the viewer’s address and what the functions read, caching nothing', () => {
    const config = ofType('AWS::CloudFront::Distribution')[0]!.Properties.DistributionConfig;
    const [origin] = config.Origins;
    const secretId = Object.keys(resources).find((id) => String(resources[id]!.Properties.Description).startsWith('The header CloudFront sends'))!;

    expect(origin.CustomOriginConfig).toMatchObject({ OriginProtocolPolicy: 'https-only', OriginSSLProtocols: ['TLSv1.2'] });
    expect(origin.OriginCustomHeaders).toEqual([{ HeaderName: 'x-origin-verify', HeaderValue: expect.anything() }]);
    expect(JSON.stringify(origin.OriginCustomHeaders)).toContain(`{{resolve:secretsmanager:`);
    expect(JSON.stringify(origin.OriginCustomHeaders)).toContain(secretId);
    expect(config.DefaultCacheBehavior).toMatchObject({ ViewerProtocolPolicy: 'https-only', CachePolicyId: '4135ea2d-6df8-44a3-9df3-4b5a84be39ad' });
  });

  it('forwards to every route, through the behaviour that serves it, each header, cookie and query string it reads', async () => {
    // Prepare: the distribution's behaviours in precedence order, the default last, each with its policy.
    const config = ofType('AWS::CloudFront::Distribution')[0]!.Properties.DistributionConfig;
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
      const policy = resources[behaviour.OriginRequestPolicyId.Ref]!.Properties.OriginRequestPolicyConfig;
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
    const config = ofType('AWS::CloudFront::Distribution')[0]!.Properties.DistributionConfig;
    const feeds = (
      config.CacheBehaviors as { PathPattern: string; OriginRequestPolicyId: { Ref: string }; AllowedMethods: string[]; FunctionAssociations: unknown[] }[]
    ).find((b) => b.PathPattern === '/feeds/*')!;
    const policy = resources[feeds.OriginRequestPolicyId.Ref]!.Properties.OriginRequestPolicyConfig;
    const [viewerHost] = ofType('AWS::CloudFront::Function');

    expect(policy.HeadersConfig.Headers).toEqual(expect.arrayContaining(['if-none-match', 'if-modified-since', 'x-forwarded-host']));
    expect(policy.CookiesConfig.CookieBehavior).toBe('none');
    expect(policy.QueryStringsConfig.QueryStringBehavior).toBe('none');
    expect(feeds.AllowedMethods).toEqual(['GET', 'HEAD']);
    expect(viewerHost!.Properties.FunctionCode).toContain("request.headers['x-forwarded-host'] = { value: request.headers.host.value }");
    for (const behavior of [config.DefaultCacheBehavior, feeds])
      expect(behavior.FunctionAssociations).toEqual([expect.objectContaining({ EventType: 'viewer-request' })]);
  });

  it('has every route’s function check the origin header, the secret named in its environment and readable by it alone', () => {
    const secretId = Object.keys(resources).find((id) => String(resources[id]!.Properties.Description).startsWith('The header CloudFront sends'))!;
    const policies = ofType('AWS::IAM::Policy').map((p) => JSON.stringify(p.Properties));

    for (const spec of deployed) {
      const variables = functionOf(spec.id).Properties.Environment.Variables;
      if (spec.trigger.kind === 'http') expect(variables.ORIGIN_SECRET_ID, spec.id).toEqual({ Ref: secretId });
      else expect(variables, spec.id).not.toHaveProperty('ORIGIN_SECRET_ID');
    }
    const readers = policies.filter((p) => p.includes(`"Ref":"${secretId}"`));
    expect(readers).toHaveLength(deployed.filter((f) => f.trigger.kind === 'http').length);
  });

  it('reserves each capped function’s concurrency when asked (-c reservedConcurrency=true)', () => {
    for (const spec of deployed) {
      expect(functionOf(spec.id).Properties.ReservedConcurrentExecutions, spec.id).toBe(spec.concurrencyCap);
    }
  });

  it('e-mails the alarms to the address of -c alarmEmail', () => {
    const topic = Object.keys(resources).find((id) => resources[id]!.Type === 'AWS::SNS::Topic' && resources[id]!.Properties.DisplayName === 'Surge alarms')!;
    expect(ofType('AWS::SNS::Subscription').map((r) => r.Properties)).toEqual([{ Protocol: 'email', Endpoint: 'ops@example.com', TopicArn: { Ref: topic } }]);
  });

  it('retains every bucket, log group and secret as it is, and empties no bucket', () => {
    for (const type of ['AWS::S3::Bucket', 'AWS::Logs::LogGroup', 'AWS::SecretsManager::Secret']) {
      expect(ofType(type).length, type).toBeGreaterThan(0);
      expect(
        ofType(type).map((r) => [r.DeletionPolicy, r.UpdateReplacePolicy]),
        type,
      ).toEqual(ofType(type).map(() => ['Retain', 'Retain']));
    }
    expect(ofType('Custom::S3AutoDeleteObjects')).toEqual([]);
  });
});

/**
 * A synth in another cache shape: the functions are not bundled again (their code is the default
 * synth's), cdk-nag runs (app.synth throws on an unacknowledged finding).
 */
function synthesized(context: Record<string, unknown>) {
  const { resources, idsOf } = synthesizedStack(context);
  const variablesOf = (id: string) =>
    Object.values(resources).find((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.FunctionName === `surge-${context.stage ?? 'dev'}-${id}`)!
      .Properties.Environment.Variables;
  const authSecretId = Object.keys(resources).find((id) => resources[id]!.Properties.Description === 'ElastiCache AUTH token')!;
  return { resources, idsOf, variablesOf, authSecretId };
}

/** Every function using Redis reaches the cache at `url` in cluster mode, with the AUTH secret, and has no variable its needs do not set. */
function expectClusterEnvironment(shape: ReturnType<typeof synthesized>, url: unknown) {
  const clusterDeployment: Deployment = { ...awsLikeDeployment, redis: { ...awsLikeDeployment.redis, cluster: true } };
  const users = functions.filter((f) => envNeedsOf(f).includes('redis'));
  expect(users).not.toEqual([]);
  for (const spec of users) {
    const variables = shape.variablesOf(spec.id);
    expect(variables, spec.id).toMatchObject({ REDIS_URL: url, REDIS_CLUSTER: 'true', REDIS_AUTH_SECRET_ID: { Ref: shape.authSecretId } });
    expect(Object.keys(variables).sort(), spec.id).toEqual([...STACK_VARIABLES, ...Object.keys(environmentFor(envNeedsOf(spec), clusterDeployment))].sort());
  }
  for (const spec of functions.filter((f) => !users.includes(f))) expect(shape.variablesOf(spec.id), spec.id).not.toHaveProperty('REDIS_URL');
}

describe('the CDK app with Redis in cluster mode (-c redis=cluster)', () => {
  let shape: ReturnType<typeof synthesized>;

  beforeAll(() => {
    shape = synthesized({ redis: 'cluster' });
  });

  it('runs a replication group of 3 shards with a replica each, Multi-AZ with failover, TLS, AUTH and a non-default port', () => {
    const [groupId, ...others] = shape.idsOf('AWS::ElastiCache::ReplicationGroup');
    const group = shape.resources[groupId!]!.Properties;

    expect(others).toEqual([]);
    expect(shape.idsOf('AWS::ElastiCache::ServerlessCache')).toEqual([]);
    expect(group).toMatchObject({
      Engine: 'valkey',
      ClusterMode: 'enabled',
      NumNodeGroups: 3,
      ReplicasPerNodeGroup: 1,
      MultiAZEnabled: true,
      AutomaticFailoverEnabled: true,
      TransitEncryptionEnabled: true,
      AtRestEncryptionEnabled: true,
      Port: 6380,
    });
    expect(group).not.toHaveProperty('NumCacheClusters');
    expect(JSON.stringify(group.AuthToken)).toContain(`{{resolve:secretsmanager:`);
    expect(JSON.stringify(group.AuthToken)).toContain(shape.authSecretId);
  });

  it('sets cluster mode in a parameter group of the engine’s family, which evicts nothing and keeps the reserve', () => {
    const [groupId] = shape.idsOf('AWS::ElastiCache::ReplicationGroup');
    const [parametersId, ...others] = shape.idsOf('AWS::ElastiCache::ParameterGroup');
    const group = shape.resources[groupId!]!.Properties;

    expect(others).toEqual([]);
    expect(group.CacheParameterGroupName).toEqual({ Ref: parametersId });
    expect(shape.resources[parametersId!]!.Properties).toMatchObject({
      CacheParameterGroupFamily: `valkey${String(group.EngineVersion).split('.')[0]}`,
      Properties: { 'cluster-enabled': 'yes', 'maxmemory-policy': 'noeviction', 'reserved-memory-percent': '30' },
    });
  });

  it('gives every function using Redis the configuration endpoint, in cluster mode', () => {
    const [groupId] = shape.idsOf('AWS::ElastiCache::ReplicationGroup');
    expectClusterEnvironment(shape, {
      'Fn::Join': [
        '',
        ['rediss://', { 'Fn::GetAtt': [groupId, 'ConfigurationEndPoint.Address'] }, ':', { 'Fn::GetAtt': [groupId, 'ConfigurationEndPoint.Port'] }],
      ],
    });
  });

  it('lets only the functions reach it, on its port', () => {
    expect(redisIngressOf(shape.resources)).toEqual([{ from: 6380, to: 6380, source: 'LambdaSg' }]);
  });

  it('keeps the logical IDs of the stateful resources, the cache’s its own', () => {
    expect(statefulIn(shape.resources)).toEqual({ ...STATEFUL_DEV, ...STATEFUL_CACHE.cluster });
  });

  it('takes its shards and replicas per shard from the context, within ElastiCache’s bounds', () => {
    const sized = synthesized({ redis: 'cluster', redisShards: '5', redisReplicas: 2 });
    const [groupId] = sized.idsOf('AWS::ElastiCache::ReplicationGroup');

    expect(sized.resources[groupId!]!.Properties).toMatchObject({ NumNodeGroups: 5, ReplicasPerNodeGroup: 2 });
    expect(() => buildApp(new App({ context: { redis: 'cluster', redisShards: '0' } }))).toThrow(
      'The context value redisShards must be a whole number from 1 to 500',
    );
    expect(() => buildApp(new App({ context: { redis: 'cluster', redisShards: '2.5' } }))).toThrow('redisShards must be a whole number');
    // No replica, no Multi-AZ failover.
    expect(() => buildApp(new App({ context: { redis: 'cluster', redisReplicas: '0' } }))).toThrow(
      'The context value redisReplicas must be a whole number from 1 to 5',
    );
  });

  it('snapshots the cluster when deleted or replaced in prod', () => {
    const prod = synthesized({ redis: 'cluster', stage: 'prod' });
    const [groupId] = prod.idsOf('AWS::ElastiCache::ReplicationGroup');

    expect(prod.resources[groupId!]).toMatchObject({ DeletionPolicy: 'Snapshot', UpdateReplacePolicy: 'Snapshot' });
    expect(shape.resources[groupId!]).toMatchObject({ DeletionPolicy: 'Delete', UpdateReplacePolicy: 'Delete' });
  });
});

describe('the CDK app with the durable shape (-c redis=durable)', () => {
  let shape: ReturnType<typeof synthesized>;

  beforeAll(() => {
    shape = synthesized({ redis: 'durable' });
  });

  it('runs Valkey 9 with synchronous durability: cluster mode, Multi-AZ, a replica per shard, TLS, a node family durability takes', () => {
    const [groupId, ...others] = shape.idsOf('AWS::ElastiCache::ReplicationGroup');
    const group = shape.resources[groupId!]!.Properties;
    const [parametersId] = shape.idsOf('AWS::ElastiCache::ParameterGroup');

    expect(others).toEqual([]);
    expect(groupId).toMatch(/^RedisDurable/);
    expect(group).toMatchObject({
      Engine: 'valkey',
      EngineVersion: '9.0',
      Durability: 'sync',
      ClusterMode: 'enabled',
      NumNodeGroups: 3,
      ReplicasPerNodeGroup: 1,
      MultiAZEnabled: true,
      AutomaticFailoverEnabled: true,
      TransitEncryptionEnabled: true,
      AtRestEncryptionEnabled: true,
      CacheNodeType: 'cache.m7g.large',
    });
    // The store waits for its log itself: no min-replicas-to-write, and the functions do not WAIT.
    expect(shape.resources[parametersId!]!.Properties).toMatchObject({
      CacheParameterGroupFamily: 'valkey9',
      Properties: { 'maxmemory-policy': 'noeviction', 'cluster-enabled': 'yes' },
    });
    expect(shape.resources[parametersId!]!.Properties.Properties).not.toHaveProperty('min-replicas-to-write');
  });

  it('gives every function using Redis the configuration endpoint, in cluster mode, without waiting for replicas', () => {
    const [groupId] = shape.idsOf('AWS::ElastiCache::ReplicationGroup');
    expectClusterEnvironment(shape, {
      'Fn::Join': [
        '',
        ['rediss://', { 'Fn::GetAtt': [groupId, 'ConfigurationEndPoint.Address'] }, ':', { 'Fn::GetAtt': [groupId, 'ConfigurationEndPoint.Port'] }],
      ],
    });
    for (const spec of functions.filter((f) => envNeedsOf(f).includes('redis'))) expect(shape.variablesOf(spec.id).REDIS_REPLICA_ACKS, spec.id).toBe('0');
  });

  it('alarms when the durability log throttles writes (TrafficManagementActive), with a runbook', () => {
    const alarms = shape.idsOf('AWS::CloudWatch::Alarm').map((id) => shape.resources[id]!.Properties);
    const throttled = alarms.filter((a) => /"Alarms", RedisDurabilityThrottled\./.test(a.AlarmDescription));

    expect(throttled).toHaveLength(1);
    expect(JSON.stringify(throttled[0]!.Metrics)).toContain('"MetricName":"TrafficManagementActive"');
    expect(readFileSync('docs/runbook.md', 'utf8')).toContain('#### `RedisDurabilityThrottled`');
  });

  it('refuses at synth a node family durability does not run on, and the node type for another shape', () => {
    expect(() => buildApp(new App({ context: { redis: 'durable', redisNodeType: 'cache.t4g.small' } }))).toThrow(
      'durability runs on the node families r8g, r7g, r6g, m8g, m7g, m6g, c8gn, c7gn only',
    );
    expect(() => buildApp(new App({ context: { redis: 'cluster', redisNodeType: 'cache.m7g.large' } }))).toThrow(
      'The context value redisNodeType applies to -c redis=durable only',
    );
    expect(() => buildApp(new App({ context: { redis: 'durable', redisReplicas: '0' } }))).toThrow('redisReplicas must be a whole number from 1 to 5');
  });
});

describe('the CDK app with ElastiCache Serverless (-c redis=serverless)', () => {
  let shape: ReturnType<typeof synthesized>;

  beforeAll(() => {
    shape = synthesized({ redis: 'serverless' });
  });

  it('runs a Valkey serverless cache in the isolated subnets, without usage limits, and no node-based cache', () => {
    const [cacheId, ...others] = shape.idsOf('AWS::ElastiCache::ServerlessCache');
    const cache = shape.resources[cacheId!]!.Properties;

    expect(others).toEqual([]);
    for (const type of ['AWS::ElastiCache::ReplicationGroup', 'AWS::ElastiCache::ParameterGroup', 'AWS::ElastiCache::SubnetGroup'])
      expect(shape.idsOf(type), type).toEqual([]);
    expect(cache).toMatchObject({ Engine: 'valkey', MajorEngineVersion: '8', ServerlessCacheName: 'surge-dev', SnapshotRetentionLimit: 1 });
    expect(cache.SubnetIds).toHaveLength(2);
    // At a data-storage maximum it would evict keys with a TTL: idempotency records, sessions.
    expect(cache).not.toHaveProperty('CacheUsageLimits');
  });

  it('signs the functions in as the user group’s `default` user, whose password is the AUTH secret', () => {
    const [cacheId] = shape.idsOf('AWS::ElastiCache::ServerlessCache');
    const [groupId, ...otherGroups] = shape.idsOf('AWS::ElastiCache::UserGroup');
    const [userId, ...otherUsers] = shape.idsOf('AWS::ElastiCache::User');
    const user = shape.resources[userId!]!.Properties;

    expect([otherGroups, otherUsers]).toEqual([[], []]);
    // Named, not referenced (their ids are names of the account), so each waits for the one it names.
    expect(shape.resources[cacheId!]).toMatchObject({ Properties: { UserGroupId: 'surge-dev' }, DependsOn: [groupId] });
    expect(shape.resources[groupId!]).toMatchObject({
      Properties: { UserGroupId: 'surge-dev', Engine: 'valkey', UserIds: ['surge-dev-default'] },
      DependsOn: [userId],
    });
    expect(user.UserId).toBe('surge-dev-default');
    expect(user).toMatchObject({ UserName: 'default', Engine: 'valkey', AccessString: 'on ~* &* +@all', AuthenticationMode: { Type: 'password' } });
    expect(JSON.stringify(user.AuthenticationMode.Passwords)).toContain(`{{resolve:secretsmanager:`);
    expect(JSON.stringify(user.AuthenticationMode.Passwords)).toContain(shape.authSecretId);
  });

  it('resolves a secret only in the cache user’s password and the cluster’s master password', () => {
    const referencesByType: Record<string, number> = {};
    for (const resource of Object.values(shape.resources)) {
      const count = JSON.stringify(resource).match(DYNAMIC_REFERENCE)?.length ?? 0;
      if (count) referencesByType[resource.Type] = (referencesByType[resource.Type] ?? 0) + count;
    }
    expect(referencesByType).toEqual({ 'AWS::ElastiCache::User': 1, 'AWS::RDS::DBCluster': 1 });
  });

  it('gives every function using Redis the serverless endpoint, in cluster mode', () => {
    const [cacheId] = shape.idsOf('AWS::ElastiCache::ServerlessCache');
    expectClusterEnvironment(shape, {
      'Fn::Join': ['', ['rediss://', { 'Fn::GetAtt': [cacheId, 'Endpoint.Address'] }, ':', { 'Fn::GetAtt': [cacheId, 'Endpoint.Port'] }]],
    });
  });

  it('lets only the functions reach it, on the endpoint’s port', () => {
    expect(redisIngressOf(shape.resources)).toEqual([{ from: 6379, to: 6379, source: 'LambdaSg' }]);
  });

  it('keeps the logical IDs and names of the stateful resources, the cache’s its own', () => {
    expect(statefulIn(shape.resources)).toEqual({ ...STATEFUL_DEV, ...STATEFUL_CACHE.serverless });
  });

  it('deletes the cache in dev, and takes a named final snapshot of it in prod', () => {
    const prod = synthesized({ redis: 'serverless', stage: 'prod' });
    const [cacheId] = shape.idsOf('AWS::ElastiCache::ServerlessCache');

    expect(shape.resources[cacheId!]).toMatchObject({ DeletionPolicy: 'Delete', UpdateReplacePolicy: 'Delete' });
    expect(shape.resources[cacheId!]!.Properties).not.toHaveProperty('FinalSnapshotName');
    expect(prod.resources[cacheId!]!.Properties).toMatchObject({ ServerlessCacheName: 'surge-prod', FinalSnapshotName: 'surge-prod-final' });
  });

  it('refuses shard and replica counts, which only a cluster has', () => {
    expect(() => buildApp(new App({ context: { redis: 'serverless', redisShards: '3' } }))).toThrow(
      'The context value redisShards applies to -c redis=cluster and durable only',
    );
    expect(() => buildApp(new App({ context: { redisReplicas: '2' } }))).toThrow(
      'The context value redisReplicas applies to -c redis=cluster and durable only',
    );
  });
});

describe('which shapes wait for a replica before a reservation stands', () => {
  const redisUsers = functions.filter((f) => envNeedsOf(f).includes('redis'));

  it.each([
    ['single', 1],
    ['cluster', 1],
    ['serverless', 0],
    ['durable', 0],
  ] as const)('%s: REDIS_REPLICA_ACKS %i in every function using Redis; a primary that waits for replicas refuses writes with none', (redisShape, acks) => {
    // Act
    const shape = synthesized({ redis: redisShape });

    // Assess
    for (const spec of redisUsers) expect(shape.variablesOf(spec.id).REDIS_REPLICA_ACKS, spec.id).toBe(String(acks));
    const groups = shape.idsOf('AWS::ElastiCache::ParameterGroup').map((id) => shape.resources[id]!.Properties.Properties);
    expect(groups).toHaveLength(redisShape === 'serverless' ? 0 : 1);
    for (const group of groups) expect(group['min-replicas-to-write']).toBe(acks === 1 ? '1' : undefined);
  });
});

describe('the stage', () => {
  it('is dev or prod, and nothing else synthesizes', () => {
    expect(() => buildApp(new App({ context: { stage: 'staging' } }))).toThrow('Unknown stage "staging": pass -c stage=dev|prod');
  });

  it('refuses a load-test allowance in prod', () => {
    expect(() =>
      buildApp(new App({ context: { stage: 'prod', inboundDomain: 'inbound.test.example', loadTestSources: '10.0.0.0/8', 'aws:cdk:bundling-stacks': [] } })),
    ).toThrow('dev only, never prod');
  });
});

describe('the context values', () => {
  it('stop the synth of CloudFront outside us-east-1, and of a flag that is neither true nor false', () => {
    const region = process.env.CDK_DEFAULT_REGION;
    process.env.CDK_DEFAULT_REGION = 'eu-west-1';
    try {
      expect(() => buildApp(new App({ context: { cloudfront: 'true' } }))).toThrow("CloudFront's web ACL can only be made in us-east-1");
    } finally {
      if (region === undefined) delete process.env.CDK_DEFAULT_REGION;
      else process.env.CDK_DEFAULT_REGION = region;
    }
    expect(() => buildApp(new App({ context: { reservedConcurrency: 'yes' } }))).toThrow('The context value reservedConcurrency must be true or false');
    expect(() => buildApp(new App({ context: { redis: 'sharded' } }))).toThrow('Unknown Redis shape "sharded": pass -c redis=single|cluster|serverless');
  });
});
