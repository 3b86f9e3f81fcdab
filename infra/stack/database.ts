import { Duration, type Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import type { Function as LambdaFn } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import * as rds from 'aws-cdk-lib/aws-rds';
import type { CfnApplication } from 'aws-cdk-lib/aws-sam';
import { Trigger } from 'aws-cdk-lib/triggers';
import type { Construct } from 'constructs';
import { functions, type FunctionSpec } from '../../functions/table';
import type { Deployment } from '../../shared/platform/config';
import type { Kept, Stage } from './stage';

/** RDS Proxy listens on MySQL's port; the cluster itself on another. */
const MYSQL_PORT = 3306;
const AURORA_PORT = 3307;
const DATABASE_NAME = 'surge';
/** Left out of the database password, generated and rotated alike: URL- and shell-special characters. */
const PASSWORD_EXCLUDED_CHARACTERS = ' %+~`#$&*()|[]{}:;<>?!\'/@"\\=^,.';
/** Beyond a deploy function's own timeout, what its trigger also waits for: a cold start in the VPC and the invocation. */
const TRIGGER_MARGIN_SECONDS = 60;
/** The writer's concurrency stays within what the proxy's pool gives it. */
const PROXY_MAX_CONNECTIONS_PERCENT = 90;
/**
 * How long a function waits for one of the proxy's connections before the proxy gives up: below
 * the shortest timeout of a function using the database (health's 5 s), so a starved pool is a
 * fast, retry-safe 503 rather than a function timing out (the proxy's default is 120 s).
 */
const PROXY_BORROW_TIMEOUT_SECONDS = Math.min(...functions.filter((f) => f.env.includes('database')).map((f) => f.timeoutSeconds)) - 2;
/**
 * Named so that its exported log groups' names are known before RDS creates the cluster; by
 * stage, so a dev and a prod stack can share an account and region.
 */
const databaseClusterId = (stage: Stage) => `surge-${stage}`;
/**
 * What the cluster logs and exports, beyond the error log Aurora always writes. Each exported
 * type is turned on in the cluster's parameter group: `default.aurora-mysql8.0` has them off, so
 * their groups would stay empty. Not the general log: it records every statement, gigabytes an
 * hour at a sale's hundreds of orders a second (CloudWatch bills each ingested GB), and its writes
 * load the instance the sale needs; the twin's MariaDB keeps one where a test counts queries.
 */
const DATABASE_LOG_PARAMETERS = {
  // What took longer than a second: far beyond a healthy statement, and within every database function's timeout.
  slowquery: { slow_query_log: '1', long_query_time: '1' },
  // Who connected (the proxy, the rotation, an operator), schema changes and grants; not each
  // statement's reads and writes (QUERY_DML and QUERY_DML_NO_SELECT), which is the general log's volume again.
  audit: { server_audit_logging: '1', server_audit_events: 'CONNECT,QUERY_DDL,QUERY_DCL' },
} as const;
const DATABASE_LOG_EXPORTS = ['error', ...Object.keys(DATABASE_LOG_PARAMETERS)];

export interface DatabaseProps {
  stage: Stage;
  kept: Kept;
  vpc: ec2.IVpc;
  /** The only clients of the proxy: the functions' security group. */
  clients: ec2.ISecurityGroup;
}

/**
 * Aurora MySQL 3, Serverless v2, behind RDS Proxy, its password rotated unattended, and the
 * deploy trigger that migrates its schema before new code takes traffic. Its resources are the
 * stack's own children (see stack.ts).
 */
export class Database {
  readonly cluster: rds.DatabaseCluster;
  readonly proxy: rds.DatabaseProxy;
  /** Where the functions reach it: the need `database` of shared/platform/config.ts. */
  readonly need: Deployment['database'];
  private readonly migrations: Trigger[] = [];

  constructor(
    private readonly stack: Stack,
    props: DatabaseProps,
  ) {
    const { kept, vpc } = props;
    const proxySg = new ec2.SecurityGroup(stack, 'ProxySg', { vpc, description: 'RDS Proxy, from functions only' });
    const databaseSg = new ec2.SecurityGroup(stack, 'DatabaseSg', { vpc, description: 'Aurora, from the proxy only', allowAllOutbound: false });
    proxySg.addIngressRule(props.clients, ec2.Port.tcp(MYSQL_PORT), 'functions to the proxy');
    databaseSg.addIngressRule(proxySg, ec2.Port.tcp(AURORA_PORT), 'proxy to Aurora');

    const credentials = rds.Credentials.fromGeneratedSecret('surge', { excludeCharacters: PASSWORD_EXCLUDED_CHARACTERS });
    // RDS creates the log groups it exports to, outside CloudFormation, unless they exist: these
    // are the stack's, made before the cluster, so they go (or stay) with the stack.
    const logs = DATABASE_LOG_EXPORTS.map(
      (type) =>
        new LogGroup(stack, `DatabaseLogs-${type}`, {
          logGroupName: `/aws/rds/cluster/${databaseClusterId(props.stage)}/${type}`,
          retention: RetentionDays.ONE_MONTH,
          removalPolicy: kept.logs,
        }),
    );
    const engine = rds.DatabaseClusterEngine.auroraMysql({ version: rds.AuroraMysqlEngineVersion.VER_3_10_4 });
    const parameterGroup = new rds.ParameterGroup(stack, 'DatabaseParameters', {
      engine,
      description: 'Surge Aurora cluster: the slow-query and audit logs it exports',
      // The logs go to files, which is what RDS exports to CloudWatch (not a table).
      // REPEATABLE READ stated, not left to the engine's default: the writer's locked reads of decisions not made yet take
      // gap locks that hold a compensation back until it commits (shared/reservations/writer.ts). The twin's MariaDB runs the same.
      parameters: { log_output: 'FILE', transaction_isolation: 'REPEATABLE-READ', ...DATABASE_LOG_PARAMETERS.slowquery, ...DATABASE_LOG_PARAMETERS.audit },
    });
    this.cluster = new rds.DatabaseCluster(stack, 'Database', {
      clusterIdentifier: databaseClusterId(props.stage),
      engine,
      parameterGroup,
      credentials,
      defaultDatabaseName: DATABASE_NAME,
      port: AURORA_PORT,
      writer: rds.ClusterInstance.serverlessV2('Writer'),
      readers: [rds.ClusterInstance.serverlessV2('Reader', { scaleWithWriter: true })],
      serverlessV2MinCapacity: 0.5,
      serverlessV2MaxCapacity: 16,
      vpc,
      vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_ISOLATED },
      securityGroups: [databaseSg],
      storageEncrypted: true,
      deletionProtection: kept.deletionProtection,
      backup: { retention: Duration.days(7) },
      // Off, as at the proxy: the proxy signs in with the secret's password, the only user there is,
      // and only the proxy may reach the cluster, so IAM tokens would open a door no one uses. IAM
      // at the proxy instead would have every function sign a token per connection (see nag.ts).
      iamAuthentication: false,
      cloudwatchLogsExports: DATABASE_LOG_EXPORTS,
      removalPolicy: kept.databases,
    });
    for (const group of logs) this.cluster.node.defaultChild!.node.addDependency(group);
    // Unattended rotation: RDS Proxy reads the secret, and the functions look it up again when the
    // password is refused. Not on creation, where a first rotation would race the first migration.
    const rotation = this.cluster.addRotationSingleUser({
      automaticallyAfter: Duration.days(30),
      excludeCharacters: PASSWORD_EXCLUDED_CHARACTERS,
      rotateImmediatelyOnUpdate: false,
    });
    this.ownRotationFunctionLogs(rotation.node.defaultChild as CfnApplication, kept);
    // Secrets Manager tests the rotation as soon as the schedule exists, and the rotation signs in
    // to the writer: the schedule references only the cluster, which RDS finishes before any instance.
    this.cluster.secret!.node.findChild('RotationSchedule').node.addDependency(this.cluster.node.findChild('Writer'));
    this.proxy = this.cluster.addProxy('Proxy', {
      secrets: [this.cluster.secret!],
      vpc,
      securityGroups: [proxySg],
      requireTLS: true,
      maxConnectionsPercent: PROXY_MAX_CONNECTIONS_PERCENT,
      borrowTimeout: Duration.seconds(PROXY_BORROW_TIMEOUT_SECONDS),
    });
    // The URL carries no credentials: functions look the secret up at cold start.
    this.need = { url: `mysql://${this.proxy.endpoint}:${MYSQL_PORT}/${DATABASE_NAME}`, secretId: this.cluster.secret!.secretArn, tls: true };
  }

  /** Runs a deploy function (the migrations) on every deploy, once the cluster and the proxy are there. */
  migrateOnDeploy(spec: FunctionSpec, fn: LambdaFn): void {
    this.migrations.push(
      new Trigger(this.stack, `${spec.id}Trigger`, {
        handler: fn,
        // At its default of 2 minutes the trigger would give up on a migration still running.
        timeout: Duration.seconds(spec.timeoutSeconds + TRIGGER_MARGIN_SECONDS),
        executeAfter: [this.cluster, this.proxy],
        executeOnHandlerChange: true,
      }),
    );
  }

  /** Has what takes traffic (serving functions, the API stage) wait for every deploy's migrations. */
  migrateBefore(...scopes: Construct[]): void {
    for (const migration of this.migrations) migration.executeBefore(...scopes);
  }

  /**
   * The rotation function lives in a nested stack from the Serverless Application Repository,
   * under a name CDK chooses, and Secrets Manager first runs it while the stack is created (it
   * tests a rotation that is not immediate). Its log group is the stack's, made before the application.
   */
  private ownRotationFunctionLogs(application: CfnApplication, kept: Kept): void {
    const { functionName } = application.parameters as Record<string, string>;
    const logs = new LogGroup(this.stack, 'DatabaseRotationLogs', {
      logGroupName: `/aws/lambda/${functionName}`,
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: kept.logs,
    });
    application.node.addDependency(logs);
  }
}
