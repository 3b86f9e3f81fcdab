/** What the stack's tests share: an environment for synthesis, the stateful resources of each stage and cache shape, a deployment as AWS runs it. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { envNeedsOf, functions, inboundMail, orderRouteRateLimit } from '../../functions/table';
import { environmentFor, serviceEnvironment, type Deployment } from '../../shared/platform/config';
import { deployedNameOf, synthesized as synthesizedStack, type Resource } from './stack';

// Synthesis needs no credentials and no network; nothing may phone home or read a real profile.
process.env.HOME = mkdtempSync(join(tmpdir(), 'surge-cdk-'));
process.env.CDK_DISABLE_VERSION_CHECK = '1';
process.env.CDK_DISABLE_CLI_TELEMETRY = '1';

/** The log types the Aurora cluster exports, each to a group CloudFormation owns. */
export const DATABASE_LOG_EXPORTS = ['error', 'slowquery', 'audit'];

/** A deployment that sets what the stack sets (every secret id), with the other optional settings left to their defaults. */
export const awsLikeDeployment: Deployment = {
  redis: { url: 'rediss://cache.example:6380', authSecretId: 'redis-auth', replicaAcks: 1 },
  database: { url: 'mysql://proxy.example:3306/surge', secretId: 'database', tls: true },
  reservationQueueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/surge-reservations',
  reservationDlqUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/surge-reservations-dlq',
  cookieSecure: true,
  inboundDomain: 'inbound.test.example',
  rawMail: { bucket: 'surge-raw-mail', prefix: inboundMail.prefix, retentionDays: inboundMail.retentionDays },
  firstAdminSecretId: 'first-admin',
  orderRouteRateLimit: orderRouteRateLimit(),
};
/** Set by the stack on every function, outside any need. */
export const STACK_VARIABLES = Object.keys(serviceEnvironment);
export const DYNAMIC_REFERENCE = /\{\{resolve:/g;

/** Who may reach the cache's security group, on which ports: each rule's source group by the start of its logical id. */
export const redisIngressOf = (resources: Record<string, Resource>) => {
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
export const STATEFUL_NAME_PROPERTY: Record<string, string | undefined> = {
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
export const statefulIn = (resources: Record<string, Resource>): Record<string, string> =>
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
export const STATEFUL_DEV: Record<string, string> = {
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
export const STATEFUL_CACHE = {
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
export const NOT_IN_PROD = [
  'createloadtestbuyersLogsBF798FA8',
  'CustomS3AutoDeleteObjectsCustomResourceProviderLogsB8B1B8F2',
  'SurgedevDatabaseSecret7EAA067A949e9864410406a8797c8999cb494bc2',
];
export const STATEFUL_PROD: Record<string, string> = {
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

/**
 * A synth in another cache shape: the functions are not bundled again (their code is the default
 * synth's), cdk-nag runs (app.synth throws on an unacknowledged finding).
 */
export function synthesizedShape(context: Record<string, unknown>) {
  const { resources, idsOf } = synthesizedStack(context);
  const variablesOf = (id: string) =>
    Object.values(resources).find(
      (r) => r.Type === 'AWS::Lambda::Function' && r.Properties.FunctionName === deployedNameOf(`surge-${context.stage ?? 'dev'}`, id),
    )!.Properties.Environment.Variables;
  const authSecretId = Object.keys(resources).find((id) => resources[id]!.Properties.Description === 'ElastiCache AUTH token')!;
  return { resources, idsOf, variablesOf, authSecretId };
}

/** Every function using Redis reaches the cache at `url` in cluster mode, with the AUTH secret, and has no variable its needs do not set. */
export function expectClusterEnvironment(shape: ReturnType<typeof synthesizedShape>, url: unknown) {
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
