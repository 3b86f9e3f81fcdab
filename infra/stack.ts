import { CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { Function as LambdaFn } from 'aws-cdk-lib/aws-lambda';
import { Secret, type ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { addCache, type RedisPlan } from './redis';
import { Observability } from './observability';
import { Api } from './stack/api';
import { Database } from './stack/database';
import { Edge } from './stack/edge';
import { Functions, ownHelperFunctionLogs } from './stack/functions';
import { Mail } from './stack/mail';
import { Network } from './stack/network';
import { Queues } from './stack/queues';
import { KEPT_BY, type Stage } from './stack/stage';
import { functions, orderRouteRateLimit, type EnvNeed } from '../functions/table';
import { requestReads } from '../shared/api/api';
import type { Deployment } from '../shared/platform/config';
import { routesOfTable } from './table-routes';
import { GradualDeploys, type DeployMode } from './stack/gradual';

/** Every route with what it reads of a request, from its entry's api(): the edge forwards that (stack/edge-requests.ts). */
const tableRoutes = (await routesOfTable()).map((route) => ({
  id: route.spec.id,
  method: route.method,
  path: route.path,
  reads: requestReads(route.api),
  loadTest: route.spec.loadTest,
}));

export interface SurgeStackProps extends StackProps {
  /** What the stack keeps when it, or one of its resources, is deleted (see KEPT_BY in stack/stage.ts). */
  stage: Stage;
  /** The start of its functions', queues', receipt rule set's and API's names (namePrefixOf in stack/stage.ts). */
  namePrefix: string;
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
  /** How a deploy moves the API's and the queue's functions to new code (stack/gradual.ts). */
  deploy: DeployMode;
}

/**
 * The whole of Surge on AWS, composed of one part per concern (infra/stack/*.ts, infra/redis.ts,
 * infra/observability.ts). Each part adds its resources to this stack itself, not beneath a
 * construct of its own: a resource's logical ID is its path in the stack, and under a new parent
 * CloudFormation would replace it (the database, cache, queues and buckets with their data; named
 * functions and queues would fail the deploy). test/infra/stack.test.ts pins the stateful ones.
 */
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

    const network = new Network(this, { logsRemovalPolicy: kept.logs });
    // ElastiCache (Valkey) in the shape asked for (infra/redis.ts): TLS, AUTH from Secrets Manager, Multi-AZ.
    const cache = addCache(this, {
      plan: props.redis,
      name: `surge-${props.stage}`,
      vpc: network.vpc,
      clients: network.functions,
      removalPolicy: kept.databases,
    });
    const database = new Database(this, { stage: props.stage, kept, vpc: network.vpc, clients: network.functions });
    const queues = new Queues(this, props.namePrefix);
    const mail = new Mail(this, { kept, inboundDomain: props.inboundDomain, namePrefix: props.namePrefix });
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
    const api = new Api(this, { kept, name: props.namePrefix });
    const routes = tableRoutes.filter((route) => !(route.loadTest && props.stage === 'prod'));
    const edge = props.cloudFront ? new Edge(this, { api: api.api, logs: mail.accessLogs, routes }) : undefined;

    // Where each need points on AWS. The URLs carry no credentials: functions look the secrets
    // up at cold start (shared/platform/clients/credentials.ts), so no password is in their configuration.
    const deployment: Deployment = {
      redis: cache.redis,
      database: database.need,
      reservationQueueUrl: queues.queue('reservations').queueUrl,
      reservationDlqUrl: queues.all.get('reservations')!.deadLetters.queueUrl,
      cookieSecure: true,
      inboundDomain: props.inboundDomain,
      rawMail: mail.need,
      firstAdminSecretId: adminCredentials.secretArn,
      orderRouteRateLimit: orderRouteRateLimit(),
      ...(props.loadTestSources ? { loadTestSources: props.loadTestSources } : {}),
      ...(edge ? { originSecretId: edge.originSecret.secretArn } : {}),
    };
    const secretOf: Partial<Record<EnvNeed, ISecret>> = {
      redis: cache.auth,
      database: database.cluster.secret!,
      firstAdmin: adminCredentials,
      ...(edge ? { cloudFront: edge.originSecret } : {}),
    };
    const fns = new Functions(this, {
      namePrefix: props.namePrefix,
      vpc: network.vpc,
      securityGroup: network.functions,
      logsRemovalPolicy: kept.logs,
      deployment,
      secretOf,
      sourceMapStackTraces: props.sourceMapStackTraces === true,
      reserveConcurrency: props.reserveConcurrency,
      invoked: props.deploy === 'all-at-once' ? 'function' : 'alias',
    });

    // Each table row: its function, what its needs let it reach, and what starts it.
    const serving: LambdaFn[] = [];
    const gradual = new GradualDeploys(this, props.deploy);
    for (const spec of functions) {
      if (spec.loadTest && props.stage === 'prod') continue;
      const fn = fns.add(spec);
      this.functions.set(spec.id, fn);
      if (spec.env.includes('reservationQueue')) queues.queue('reservations').grantSendMessages(fn);
      if (spec.env.includes('reservationFailures')) queues.all.get('reservations')!.deadLetters.grantSendMessages(fn);
      if (spec.env.includes('rawMail')) mail.grantRead(fn);
      if (spec.trigger.kind !== 'deploy') serving.push(fn);
      const trigger = spec.trigger;
      switch (trigger.kind) {
        case 'http':
          api.route(spec, trigger, gradual.target(spec, fn));
          break;
        case 'queue':
          queues.consume(spec, trigger, gradual.target(spec, fn));
          break;
        case 'schedule':
          new Rule(this, `${spec.id}Schedule`, { schedule: Schedule.rate(Duration.minutes(trigger.rateMinutes)), targets: [new LambdaFunction(fn)] });
          break;
        case 'deploy':
          database.migrateOnDeploy(spec, fn);
          break;
        case 'ses':
          mail.receive(spec, fn);
          break;
      }
    }
    // On every deploy the schema is migrated before new code takes traffic: each serving function
    // waits for it (its queue mapping too, which is inside it), and so does the API stage. Whatever
    // else names a function (schedule and receipt rules, routes and their permissions) follows it.
    database.migrateBefore(api.stage, ...serving);

    new CfnOutput(this, 'ApiUrl', { value: edge ? `https://${edge.distribution.distributionDomainName}` : api.api.apiEndpoint });
    new CfnOutput(this, 'AdminSecretArn', {
      value: adminCredentials.secretArn,
      description: "The first admin's credentials: aws secretsmanager get-secret-value --secret-id <this> --query SecretString --output text",
    });

    // The dashboard, and the alarms that wake someone (docs/runbook.md, "Alarms").
    const observability = new Observability(this, 'Observability', {
      ...(props.alarmEmail ? { alarmEmail: props.alarmEmail } : {}),
      keyRemovalPolicy: kept.secrets,
      api: api.api,
      functions: this.functions,
      queues: queues.all,
      mailFailures: mail.failures,
      cache: cache.watch,
      database: database.cluster,
      proxy: database.proxy,
    });
    // What rolls a gradual deploy back, beside the new version's own errors: the harm a function can do.
    gradual.deploymentGroups((spec) => {
      const reserving = spec.env.includes('reservationQueue') ? ['HandOffFailures', 'GuardRejections'] : [];
      const harm = spec.trigger.kind === 'http' ? ['Api5xxRate', ...reserving] : ['reservationsDlqDepth', 'GuardRejections'];
      return harm.map((id) => observability.named(id));
    });

    // Every secret, the cluster's generated credentials among them, goes or stays with the stage.
    for (const secret of this.node.findAll().filter((c) => c instanceof Secret)) secret.applyRemovalPolicy(kept.secrets);
    ownHelperFunctionLogs(this, kept.logs);
  }
}
