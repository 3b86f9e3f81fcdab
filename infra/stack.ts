import { join } from 'node:path';
import { CfnOutput, CfnResource, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { HttpApi, HttpMethod, HttpStage, type CfnStage } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import { HttpOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { Architecture, CfnFunction, Runtime, type Function as LambdaFn } from 'aws-cdk-lib/aws-lambda';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import * as rds from 'aws-cdk-lib/aws-rds';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { ReceiptRuleSet, TlsPolicy } from 'aws-cdk-lib/aws-ses';
import * as sesActions from 'aws-cdk-lib/aws-ses-actions';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { CfnApplication } from 'aws-cdk-lib/aws-sam';
import { Secret, type ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Trigger } from 'aws-cdk-lib/triggers';
import { CfnWebACL } from 'aws-cdk-lib/aws-wafv2';
import type { Construct } from 'constructs';
import { BUNDLE, bundleFileCopies, WORKERS, workerBuildCommand } from './bundling';
import { addCache, type RedisPlan } from './redis';
import { Observability } from './observability';
import { buckets, entryFile, envNeedsOf, functions, inboundMail, queues, visibilityTimeoutSeconds, type EnvNeed, type FunctionSpec, type QueueName } from '../functions/table';
import { environmentFor, ORIGIN_VERIFY_HEADER, serviceEnvironment, type Deployment } from '../shared/config';

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
const PROXY_BORROW_TIMEOUT_SECONDS =
  Math.min(...functions.filter((f) => f.env.includes('database')).map((f) => f.timeoutSeconds)) - 2;
/**
 * The WAF's requests per client address in its 5-minute window (about 10 a second): far above a
 * person's, even through a shared NAT, and far below a script's flood.
 */
const WAF_REQUESTS_PER_ADDRESS = 3_000;
/** A web ACL for CloudFront (scope CLOUDFRONT) exists only in us-east-1, so a stack with CloudFront is deployed there. */
export const CLOUDFRONT_REGION = 'us-east-1';
/**
 * Named so that its exported log groups' names are known before RDS creates the cluster; by
 * stage, so a dev and a prod stack can share an account and region.
 */
const databaseClusterId = (stage: Stage) => `surge-${stage}`;
const DATABASE_LOG_EXPORTS = ['error', 'general', 'slowquery', 'audit'];

/** The stages a deployment can be, chosen with `-c stage=…`. */
export const STAGES = ['dev', 'prod'] as const;
export type Stage = (typeof STAGES)[number];

/**
 * What each stage keeps when CloudFormation deletes a resource: on `cdk destroy`, on a
 * replacement, and on the rollback of a failed first deploy.
 */
const KEPT_BY: Record<Stage, { deletionProtection: boolean; databases: RemovalPolicy; buckets: RemovalPolicy; logs: RemovalPolicy; secrets: RemovalPolicy }> = {
  // Nothing: a failed first deploy rolls back to nothing, and destroying the stack leaves nothing.
  dev: { deletionProtection: false, databases: RemovalPolicy.DESTROY, buckets: RemovalPolicy.DESTROY, logs: RemovalPolicy.DESTROY, secrets: RemovalPolicy.DESTROY },
  // The data: Aurora and the cache as a final snapshot, the rest as it is.
  prod: { deletionProtection: true, databases: RemovalPolicy.SNAPSHOT, buckets: RemovalPolicy.RETAIN, logs: RemovalPolicy.RETAIN, secrets: RemovalPolicy.RETAIN },
};

const root = join(import.meta.dirname, '..');

/**
 * esbuild bundles each function locally (no Docker): minified, tree-shaken, ESM for Node 20 so the
 * same code runs in the twin. Lua scripts and migrations are files the code reads beside itself.
 */
function bundling(spec: FunctionSpec) {
  return {
    minify: true,
    sourceMap: true,
    // The map maps names and lines; the sources themselves are in the repository.
    sourcesContent: false,
    format: OutputFormat.ESM,
    forceDockerBundling: false,
    // Warnings and errors only, as the bundles the twin builds (ESBUILD_OPTIONS): not a summary per function on every synth.
    logLevel: LogLevel.WARNING,
    target: BUNDLE.target,
    mainFields: [...BUNDLE.mainFields],
    banner: BUNDLE.banner,
    externalModules: [...BUNDLE.externalModules],
    esbuildArgs: Object.fromEntries(Object.entries(BUNDLE.alias).map(([name, path]) => [`--alias:${name}`, path])),
    commandHooks: {
      beforeBundling: () => [],
      beforeInstall: () => [],
      afterBundling: (_input: string, output: string) => [
        ...bundleFileCopies(root, spec.id, output),
        ...(WORKERS[spec.id] ?? []).map((worker) => workerBuildCommand(root, worker, output)),
      ],
    },
  };
}

export interface SurgeStackProps extends StackProps {
  /** What the stack keeps when it, or one of its resources, is deleted (see KEPT_BY). */
  stage: Stage;
  /** The domain SES receives newsletters for (MX record → SES inbound). */
  inboundDomain: string;
  /** The first admin's sign-in address; the deploy trigger creates that admin with a generated password (AdminSecretArn). */
  adminEmail: string;
  /**
   * Stack traces through the shipped source maps (`--enable-source-maps`). Off by default: it
   * slows every cold start; the maps ship with each function for decoding a trace offline.
   */
  sourceMapStackTraces?: boolean;
  /**
   * Source addresses a load test sends from, exempt from the per-source rate limits (IPv4 CIDR
   * blocks, comma-separated); `dev` only: a prod stack with it does not synthesize.
   */
  loadTestSources?: string;
  /**
   * CloudFront with a WAF web ACL in front of the API, which then refuses requests that went
   * around it. Needs the stack in us-east-1, where CloudFront's web ACLs live.
   */
  cloudFront: boolean;
  /** Reserve each capped function's concurrency (the table's concurrencyCap); off, they share the account's pool. */
  reserveConcurrency: boolean;
  /** The cache's shape: one primary and a replica, a cluster of shards, or ElastiCache Serverless (infra/redis.ts). */
  redis: RedisPlan;
  /** Who the alarms e-mail (the `Alarms` topic's subscription); none without it. */
  alarmEmail?: string;
}

export class SurgeStack extends Stack {
  readonly functions = new Map<string, LambdaFn>();
  readonly stage: Stage;

  constructor(scope: Construct, id: string, props: SurgeStackProps) {
    super(scope, id, {
      description: `Surge (${props.stage}): serverless backend for flash crowds`,
      ...props,
      tags: { ...props.tags, stage: props.stage },
    });
    this.stage = props.stage;
    const kept = KEPT_BY[props.stage];
    if (props.loadTestSources && props.stage === 'prod') throw new Error('loadTestSources exempts sources from the rate limits: dev only, never prod');

    // Network: isolated subnets only; AWS services through endpoints, no NAT.
    const vpc = new ec2.Vpc(this, 'Vpc', {
      maxAzs: 2,
      natGateways: 0,
      subnetConfiguration: [{ name: 'isolated', subnetType: ec2.SubnetType.PRIVATE_ISOLATED, cidrMask: 22 }],
      // Its own group rather than the one flowLogs would create, which is always retained.
      flowLogs: {
        all: {
          trafficType: ec2.FlowLogTrafficType.REJECT,
          destination: ec2.FlowLogDestination.toCloudWatchLogs(new LogGroup(this, 'VpcFlowLogs', { removalPolicy: kept.logs })),
        },
      },
    });
    vpc.addGatewayEndpoint('S3', { service: ec2.GatewayVpcEndpointAwsService.S3 });
    vpc.addInterfaceEndpoint('Sqs', { service: ec2.InterfaceVpcEndpointAwsService.SQS });
    vpc.addInterfaceEndpoint('SecretsManager', { service: ec2.InterfaceVpcEndpointAwsService.SECRETS_MANAGER });
    const lambdaSg = new ec2.SecurityGroup(this, 'LambdaSg', { vpc, description: 'Surge functions' });
    const proxySg = new ec2.SecurityGroup(this, 'ProxySg', { vpc, description: 'RDS Proxy, from functions only' });
    const databaseSg = new ec2.SecurityGroup(this, 'DatabaseSg', { vpc, description: 'Aurora, from the proxy only', allowAllOutbound: false });
    proxySg.addIngressRule(lambdaSg, ec2.Port.tcp(MYSQL_PORT), 'functions to the proxy');
    databaseSg.addIngressRule(proxySg, ec2.Port.tcp(AURORA_PORT), 'proxy to Aurora');

    // ElastiCache (Valkey) in the shape asked for (infra/redis.ts): TLS, AUTH from Secrets Manager, Multi-AZ.
    const cache = addCache(this, { plan: props.redis, name: `surge-${props.stage}`, vpc, clients: lambdaSg, removalPolicy: kept.databases });

    // Aurora MySQL 3, Serverless v2, behind RDS Proxy.
    const credentials = rds.Credentials.fromGeneratedSecret('surge', { excludeCharacters: PASSWORD_EXCLUDED_CHARACTERS });
    // RDS creates the log groups it exports to, outside CloudFormation, unless they exist: these
    // are the stack's, made before the cluster, so they go (or stay) with the stack.
    const databaseLogs = DATABASE_LOG_EXPORTS.map(
      (type) =>
        new LogGroup(this, `DatabaseLogs-${type}`, {
          logGroupName: `/aws/rds/cluster/${databaseClusterId(props.stage)}/${type}`,
          retention: RetentionDays.ONE_MONTH,
          removalPolicy: kept.logs,
        }),
    );
    const database = new rds.DatabaseCluster(this, 'Database', {
      clusterIdentifier: databaseClusterId(props.stage),
      engine: rds.DatabaseClusterEngine.auroraMysql({ version: rds.AuroraMysqlEngineVersion.VER_3_10_4 }),
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
      iamAuthentication: true,
      cloudwatchLogsExports: DATABASE_LOG_EXPORTS,
      removalPolicy: kept.databases,
    });
    for (const logs of databaseLogs) database.node.defaultChild!.node.addDependency(logs);
    // Unattended rotation: RDS Proxy reads the secret, and the functions look it up again when the
    // password is refused. Not on creation, where a first rotation would race the first migration.
    const rotation = database.addRotationSingleUser({
      automaticallyAfter: Duration.days(30),
      excludeCharacters: PASSWORD_EXCLUDED_CHARACTERS,
      rotateImmediatelyOnUpdate: false,
    });
    this.ownRotationFunctionLogs(rotation.node.defaultChild as CfnApplication, kept.logs);
    const proxy = database.addProxy('Proxy', {
      secrets: [database.secret!],
      vpc,
      securityGroups: [proxySg],
      requireTLS: true,
      maxConnectionsPercent: PROXY_MAX_CONNECTIONS_PERCENT,
      borrowTimeout: Duration.seconds(PROXY_BORROW_TIMEOUT_SECONDS),
    });

    // Queues: each with its DLQ, TLS only, visibility six times its consumer's timeout.
    const queueOf = new Map<QueueName, Queue>();
    const deadLettersOf = new Map<QueueName, Queue>();
    for (const name of Object.keys(queues) as QueueName[]) {
      const spec = queues[name];
      const deadLetters = new Queue(this, `${name}Dlq`, {
        queueName: spec.deadLetterName,
        retentionPeriod: Duration.days(14),
        enforceSSL: true,
        encryption: QueueEncryption.SQS_MANAGED,
      });
      const queue = new Queue(this, `${name}Queue`, {
        queueName: spec.name,
        visibilityTimeout: Duration.seconds(visibilityTimeoutSeconds(name)),
        deadLetterQueue: { queue: deadLetters, maxReceiveCount: spec.maxReceiveCount },
        enforceSSL: true,
        encryption: QueueEncryption.SQS_MANAGED,
      });
      queueOf.set(name, queue);
      deadLettersOf.set(name, deadLetters);
      new CfnOutput(this, `${name}QueueUrl`, { value: queue.queueUrl });
    }

    // Raw inbound mail: encrypted, private, TLS only, kept for the retention period (quarantine included).
    const accessLogs = new Bucket(this, 'AccessLogs', {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_PREFERRED,
      enforceSSL: true,
      lifecycleRules: [{ expiration: Duration.days(90) }],
      removalPolicy: kept.buckets,
      autoDeleteObjects: kept.buckets === RemovalPolicy.DESTROY,
    });
    const rawMail = new Bucket(this, 'RawMail', {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      lifecycleRules: [{ prefix: inboundMail.prefix, expiration: Duration.days(inboundMail.retentionDays) }],
      serverAccessLogsBucket: accessLogs,
      serverAccessLogsPrefix: `${buckets[inboundMail.bucket].name}/`,
      removalPolicy: kept.buckets,
      // CloudFormation cannot delete a bucket with objects in it; this empties it first.
      autoDeleteObjects: kept.buckets === RemovalPolicy.DESTROY,
    });

    // The first admin's address and a generated password. Only the deploy trigger reads it, to
    // create that admin if absent; the operator reads it once to sign in (see AdminSecretArn).
    const adminCredentials = new Secret(this, 'AdminCredentials', {
      description: "The first admin's email and password, created by the deploy trigger if absent",
      generateSecretString: {
        secretStringTemplate: JSON.stringify({ email: props.adminEmail }),
        generateStringKey: 'password',
        passwordLength: 32,
        excludePunctuation: true,
      },
    });

    // The header CloudFront adds to every request it passes to the API; the functions refuse
    // requests without it. Never rotated: CloudFront reads it once per deploy (see nag.ts).
    const originSecret = props.cloudFront
      ? new Secret(this, 'OriginSecret', {
          description: 'The header CloudFront sends the API with every request, proving it came through the distribution',
          generateSecretString: { passwordLength: 48, excludePunctuation: true },
        })
      : undefined;

    // Where each need points on AWS. The URLs carry no credentials: functions look the secrets
    // up at cold start (shared/clients/credentials.ts), so no password is in their configuration.
    const deployment: Deployment = {
      redis: cache.redis,
      database: { url: `mysql://${proxy.endpoint}:${MYSQL_PORT}/${DATABASE_NAME}`, secretId: database.secret!.secretArn, tls: true },
      reservationQueueUrl: queueOf.get('reservations')!.queueUrl,
      cookieSecure: true,
      inboundDomain: props.inboundDomain,
      rawMail: { bucket: rawMail.bucketName, prefix: inboundMail.prefix },
      firstAdminSecretId: adminCredentials.secretArn,
      ...(props.loadTestSources ? { loadTestSources: props.loadTestSources } : {}),
      ...(originSecret ? { originSecretId: originSecret.secretArn } : {}),
    };
    // The secret holding each need's credentials: a function may read those of its needs only.
    const secretOf: Partial<Record<EnvNeed, ISecret>> = {
      redis: cache.auth,
      database: database.secret!,
      firstAdmin: adminCredentials,
      ...(originSecret ? { cloudFront: originSecret } : {}),
    };
    const stackVariables: Record<string, string> = {
      ...serviceEnvironment,
      // Loading source maps at start costs every cold start ~50–70 ms, so only on request.
      ...(props.sourceMapStackTraces ? { NODE_OPTIONS: '--enable-source-maps' } : {}),
    };

    const api = new HttpApi(this, 'Api', { apiName: 'surge', createDefaultStage: false });
    const apiAccessLogs = new LogGroup(this, 'ApiAccessLogs', { retention: RetentionDays.ONE_MONTH, removalPolicy: kept.logs });
    const stage = new HttpStage(this, 'DefaultStage', {
      httpApi: api,
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: 5_000, burstLimit: 10_000 },
    });
    (stage.node.defaultChild as CfnStage).accessLogSettings = {
      destinationArn: apiAccessLogs.logGroupArn,
      format: JSON.stringify({
        requestId: '$context.requestId',
        ip: '$context.identity.sourceIp',
        routeKey: '$context.routeKey',
        status: '$context.status',
        latency: '$context.responseLatency',
        integrationError: '$context.integrationErrorMessage',
      }),
    };

    const routeThrottles: Record<string, { ThrottlingRateLimit: number; ThrottlingBurstLimit: number }> = {};
    const mailFunctions: LambdaFn[] = [];
    const mailFailures: Queue[] = [];
    const servingFunctions: LambdaFn[] = [];
    const deployTriggers: Trigger[] = [];
    for (const spec of functions) {
      if (spec.loadTest && props.stage === 'prod') continue;
      const fn = new NodejsFunction(this, spec.id, {
        functionName: `surge-${spec.id}`,
        description: spec.description,
        entry: join(root, entryFile(spec)),
        handler: 'handler',
        runtime: Runtime.NODEJS_24_X,
        architecture: Architecture.ARM_64,
        memorySize: spec.memoryMb,
        timeout: Duration.seconds(spec.timeoutSeconds),
        environment: { ...stackVariables, ...environmentFor(envNeedsOf(spec), deployment) },
        vpc,
        vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_ISOLATED },
        securityGroups: [lambdaSg],
        logGroup: new LogGroup(this, `${spec.id}Logs`, { retention: RetentionDays.ONE_MONTH, removalPolicy: kept.logs }),
        bundling: bundling(spec),
        projectRoot: root,
        depsLockFilePath: join(root, 'package-lock.json'),
        ...(props.reserveConcurrency && spec.concurrencyCap ? { reservedConcurrentExecutions: spec.concurrencyCap } : {}),
      });
      this.functions.set(spec.id, fn);
      for (const need of envNeedsOf(spec)) secretOf[need]?.grantRead(fn);
      if (spec.env.includes('reservationQueue')) queueOf.get('reservations')!.grantSendMessages(fn);
      if (spec.env.includes('rawMail')) {
        fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:GetObject'], resources: [rawMail.arnForObjects(`${inboundMail.prefix}*`)] }));
        // Without ListBucket S3 answers a missing key with AccessDenied instead of NoSuchKey.
        fn.addToRolePolicy(
          new PolicyStatement({ actions: ['s3:ListBucket'], resources: [rawMail.bucketArn], conditions: { StringLike: { 's3:prefix': [`${inboundMail.prefix}*`] } } }),
        );
      }
      if (spec.trigger.kind !== 'deploy') servingFunctions.push(fn);

      const trigger = spec.trigger;
      switch (trigger.kind) {
        case 'http': {
          // Past its cap Lambda throttles, and API Gateway turns that into a 500: the route's own
          // throttle must answer 429 first, so its burst may not exceed the cap.
          if (spec.concurrencyCap !== undefined && !(trigger.throttle && trigger.throttle.burstLimit <= spec.concurrencyCap)) {
            throw new Error(`${spec.id}: a route capped at ${spec.concurrencyCap} needs a throttle whose burst is within the cap`);
          }
          const routes = api.addRoutes({
            path: trigger.path,
            methods: [HttpMethod[trigger.method]],
            integration: new HttpLambdaIntegration(`${spec.id}Integration`, fn),
          });
          if (trigger.throttle) {
            // CloudFormation's own names: RouteSettings is a map CDK passes through as it is.
            routeThrottles[`${trigger.method} ${trigger.path}`] = { ThrottlingRateLimit: trigger.throttle.rateLimit, ThrottlingBurstLimit: trigger.throttle.burstLimit };
            // The stage's settings name the route, which must exist first.
            for (const route of routes) stage.node.addDependency(route);
          }
          break;
        }
        case 'queue': {
          const mappingConcurrency = Math.max(2, trigger.maxConcurrency);
          // Fewer instances than the mapping's batches in flight would throttle the mapping itself.
          if (spec.concurrencyCap !== undefined && spec.concurrencyCap < mappingConcurrency) {
            throw new Error(`${spec.id}: its concurrency cap ${spec.concurrencyCap} is below its queue trigger's maximum concurrency ${mappingConcurrency}`);
          }
          fn.addEventSource(
            new SqsEventSource(queueOf.get(trigger.queue)!, {
              batchSize: trigger.batchSize,
              maxBatchingWindow: trigger.maxBatchingWindowSeconds ? Duration.seconds(trigger.maxBatchingWindowSeconds) : undefined,
              maxConcurrency: mappingConcurrency,
              reportBatchItemFailures: true,
            }),
          );
          break;
        }
        case 'schedule':
          new Rule(this, `${spec.id}Schedule`, {
            schedule: Schedule.rate(Duration.minutes(trigger.rateMinutes)),
            targets: [new LambdaFunction(fn)],
          });
          break;
        case 'deploy':
          deployTriggers.push(
            new Trigger(this, `${spec.id}Trigger`, {
              handler: fn,
              // At its default of 2 minutes the trigger would give up on a migration still running.
              timeout: Duration.seconds(spec.timeoutSeconds + TRIGGER_MARGIN_SECONDS),
              executeAfter: [database, proxy],
              executeOnHandlerChange: true,
            }),
          );
          break;
        case 'ses': {
          mailFunctions.push(fn);
          // SES invokes asynchronously: an event still failing after Lambda's two retries is kept here.
          const failed = new Queue(this, `${spec.id}Failures`, {
            queueName: `surge-${spec.id}-failures`,
            retentionPeriod: Duration.days(14),
            enforceSSL: true,
            encryption: QueueEncryption.SQS_MANAGED,
          });
          fn.configureAsyncInvoke({ retryAttempts: 2, maxEventAge: Duration.hours(6), onFailure: new SqsDestination(failed) });
          mailFailures.push(failed);
          new CfnOutput(this, `${spec.id}FailuresUrl`.replace(/-/g, ''), { value: failed.queueUrl });
          break;
        }
      }
    }

    (stage.node.defaultChild as CfnStage).routeSettings = routeThrottles;

    // On every deploy the schema is migrated before new code takes traffic: each serving function
    // waits for it (its queue mapping too, which is inside it), and so does the API stage. Whatever
    // else names a function (schedule and receipt rules, routes and their permissions) follows it.
    for (const trigger of deployTriggers) trigger.executeBefore(stage, ...servingFunctions);

    // SES inbound: for the domain, store the raw message first, then invoke the mail function(s)
    // with the receipt event (which carries no body). The rule set must be made active once.
    const ruleSet = new ReceiptRuleSet(this, 'InboundRules', { receiptRuleSetName: 'surge-inbound' });
    ruleSet.addRule('Newsletters', {
      recipients: [props.inboundDomain],
      scanEnabled: true,
      tlsPolicy: TlsPolicy.REQUIRE,
      actions: [
        new sesActions.S3({ bucket: rawMail, objectKeyPrefix: inboundMail.prefix }),
        ...mailFunctions.map((fn) => new sesActions.Lambda({ function: fn, invocationType: sesActions.LambdaInvocationType.EVENT })),
      ],
    });

    const distribution = originSecret && this.cloudFrontInFront(api, originSecret, accessLogs);
    new CfnOutput(this, 'ApiUrl', { value: distribution ? `https://${distribution.distributionDomainName}` : api.apiEndpoint });
    new CfnOutput(this, 'InboundDomain', { value: props.inboundDomain });
    new CfnOutput(this, 'InboundRuleSet', { value: ruleSet.receiptRuleSetName, description: 'Activate once: aws ses set-active-receipt-rule-set --rule-set-name <this>' });
    new CfnOutput(this, 'RawMailBucket', { value: rawMail.bucketName });
    new CfnOutput(this, 'AdminSecretArn', {
      value: adminCredentials.secretArn,
      description: "The first admin's credentials: aws secretsmanager get-secret-value --secret-id <this> --query SecretString --output text",
    });

    // The dashboard, and the alarms that wake someone (docs/runbook.md, "Alarms").
    new Observability(this, 'Observability', {
      ...(props.alarmEmail ? { alarmEmail: props.alarmEmail } : {}),
      keyRemovalPolicy: kept.secrets,
      api,
      functions: this.functions,
      queues: new Map([...queueOf].map(([name, queue]) => [name, { queue, deadLetters: deadLettersOf.get(name)! }])),
      mailFailures,
      cache: cache.watch,
      database,
      proxy,
    });

    // Every secret, the cluster's generated credentials among them, goes or stays with the stage.
    for (const secret of this.node.findAll().filter((c) => c instanceof Secret)) secret.applyRemovalPolicy(kept.secrets);
    this.ownHelperFunctionLogs(kept.logs);
  }

  /**
   * CloudFront in front of the API with a WAF web ACL (a rate limit per client address, and AWS's
   * common rule set), since WAF cannot be attached to an HTTP API. Nothing is cached: every
   * request goes to the API with the origin header, the viewer's address (CloudFront-Viewer-Address,
   * for clientAddress) and what the functions read.
   */
  private cloudFrontInFront(api: HttpApi, originSecret: Secret, logs: Bucket): cloudfront.Distribution {
    const visibility = (metricName: string) => ({ cloudWatchMetricsEnabled: true, metricName, sampledRequestsEnabled: true });
    const webAcl = new CfnWebACL(this, 'WebAcl', {
      scope: 'CLOUDFRONT',
      defaultAction: { allow: {} },
      visibilityConfig: visibility('surge'),
      rules: [
        {
          name: 'RatePerAddress',
          priority: 0,
          action: { block: {} },
          statement: { rateBasedStatement: { limit: WAF_REQUESTS_PER_ADDRESS, aggregateKeyType: 'IP', evaluationWindowSec: 300 } },
          visibilityConfig: visibility('surgeRatePerAddress'),
        },
        {
          name: 'AwsCommonRules',
          priority: 1,
          overrideAction: { none: {} },
          statement: { managedRuleGroupStatement: { vendorName: 'AWS', name: 'AWSManagedRulesCommonRuleSet' } },
          visibilityConfig: visibility('surgeAwsCommonRules'),
        },
      ],
    });
    const requests = new cloudfront.OriginRequestPolicy(this, 'ApiRequests', {
      comment: 'What the functions read, and the viewer address',
      headerBehavior: cloudfront.OriginRequestHeaderBehavior.allowList('content-type', 'idempotency-key', 'x-correlation-id', 'user-agent', 'cloudfront-viewer-address'),
      cookieBehavior: cloudfront.OriginRequestCookieBehavior.all(),
      queryStringBehavior: cloudfront.OriginRequestQueryStringBehavior.all(),
    });
    return new cloudfront.Distribution(this, 'Cdn', {
      comment: 'Surge API behind WAF',
      webAclId: webAcl.attrArn,
      priceClass: cloudfront.PriceClass.PRICE_CLASS_100,
      enableLogging: true,
      logBucket: logs,
      logFilePrefix: 'cloudfront/',
      defaultBehavior: {
        origin: new HttpOrigin(`${api.apiId}.execute-api.${this.region}.${this.urlSuffix}`, {
          protocolPolicy: cloudfront.OriginProtocolPolicy.HTTPS_ONLY,
          originSslProtocols: [cloudfront.OriginSslPolicy.TLS_V1_2],
          // Resolved by CloudFormation from the secret; the functions look the same secret up.
          customHeaders: { [ORIGIN_VERIFY_HEADER]: originSecret.secretValue.unsafeUnwrap() },
        }),
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
        allowedMethods: cloudfront.AllowedMethods.ALLOW_ALL,
        cachePolicy: cloudfront.CachePolicy.CACHING_DISABLED,
        originRequestPolicy: requests,
      },
    });
  }

  /**
   * CDK's custom-resource providers (the deploy trigger's, the buckets' auto-delete) are functions
   * Lambda would give a log group of its own at their first run, outside CloudFormation. Each logs
   * to one of the stack's instead, which the function references, so it goes only after the function.
   */
  private ownHelperFunctionLogs(removalPolicy: RemovalPolicy): void {
    const providerHandlers = this.node
      .findAll()
      .filter((c): c is CfnResource => c instanceof CfnResource && !(c instanceof CfnFunction) && c.cfnResourceType === 'AWS::Lambda::Function');
    for (const handler of providerHandlers) {
      const logs = new LogGroup(handler.node.scope!, 'Logs', { retention: RetentionDays.ONE_MONTH, removalPolicy });
      handler.addPropertyOverride('LoggingConfig', { LogGroup: logs.logGroupName });
    }
  }

  /**
   * The rotation function lives in a nested stack from the Serverless Application Repository,
   * under a name CDK chooses, and Secrets Manager first runs it while the stack is created (it
   * tests a rotation that is not immediate). Its log group is the stack's, made before the application.
   */
  private ownRotationFunctionLogs(application: CfnApplication, removalPolicy: RemovalPolicy): void {
    const { functionName } = application.parameters as Record<string, string>;
    const logs = new LogGroup(this, 'DatabaseRotationLogs', {
      logGroupName: `/aws/lambda/${functionName}`,
      retention: RetentionDays.ONE_MONTH,
      removalPolicy,
    });
    application.node.addDependency(logs);
  }
}
