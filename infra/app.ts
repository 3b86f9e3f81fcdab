/**
 * The CDK app: the whole of Surge on AWS, generated from functions/table.ts.
 *   npx cdk deploy -c inboundDomain=mail.example.com               (stage dev: keeps nothing)
 *   npx cdk deploy -c inboundDomain=mail.example.com -c stage=prod (keeps the data)
 *   add -c adminEmail=ops@example.com for the first admin (admin@<inboundDomain> otherwise)
 *   -c cloudfront=true|false: CloudFront and WAF in front of the API (prod's default; dev's is false)
 *   -c reservedConcurrency=true: reserve the table's concurrency caps (off unless set)
 *   -c redis=single|cluster|serverless|durable: the cache's shape (single unless set; see infra/redis.ts),
 *     with -c redisShards=3 -c redisReplicas=1 for cluster and durable, -c redisNodeType=cache.m7g.large for durable
 *   -c alarmEmail=ops@example.com: who the alarms e-mail (no subscription unless set)
 *   -c deploy=canary|linear|all-at-once: how the API's and the queue's functions move to new code
 *     (prod's default canary, dev's all-at-once; see infra/stack/gradual.ts)
 *   -c legacyNames=true: keep the names of a stack deployed before names had a stage (stack Surge,
 *     functions surge-<fn>, …); the stack is Surge-<stage> and its names surge-<stage>-… otherwise
 */
import { Annotations, App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { EmailAddress } from '../shared/sessions/account-rules';
import { acknowledgeFindings } from './nag';
import { CLUSTER_NODES_MAX, CLUSTER_REPLICAS, CLUSTER_SHARDS, DURABLE, REDIS_SHAPES, type RedisPlan, type RedisShape } from './redis';
import { SurgeStack } from './stack';
import { DEPLOY_MODES, type DeployMode } from './stack/gradual';
import { CLOUDFRONT_REGION } from './stack/edge';
import { REGIONS_WITHOUT_SES_RECEIVING } from './stack/mail';
import { namePrefixOf, stackNameOf, STAGES, type Stage } from './stack/stage';

/** The `stage` context value, `dev` when unset; anything else stops the synth. */
function stageOf(app: App): Stage {
  const stage: unknown = app.node.tryGetContext('stage') ?? 'dev';
  if (!STAGES.includes(stage as Stage)) throw new Error(`Unknown stage ${JSON.stringify(stage)}: pass -c stage=${STAGES.join('|')}`);
  return stage as Stage;
}

/** A true/false context value, or the default when it is unset; anything else stops the synth. */
function flagOf(app: App, name: string, byDefault: boolean): boolean {
  const value: unknown = app.node.tryGetContext(name);
  if (value === undefined) return byDefault;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw new Error(`The context value ${name} must be true or false`);
}

/** A whole-number context value within bounds, or the default when it is unset; anything else stops the synth. */
function countOf(app: App, name: string, bounds: { min: number; max: number; byDefault: number }): number {
  const value: unknown = app.node.tryGetContext(name);
  if (value === undefined) return bounds.byDefault;
  const count = Number(value);
  if (!Number.isInteger(count) || count < bounds.min || count > bounds.max) {
    throw new Error(`The context value ${name} must be a whole number from ${bounds.min} to ${bounds.max}`);
  }
  return count;
}

/** How the functions move to new code (`-c deploy`): gradually in prod unless told, all at once in dev. */
function deployModeOf(app: App, stage: Stage): DeployMode {
  const mode: unknown = app.node.tryGetContext('deploy') ?? (stage === 'prod' ? 'canary' : 'all-at-once');
  if (!DEPLOY_MODES.includes(mode as DeployMode)) throw new Error(`Unknown deploy mode ${JSON.stringify(mode)}: pass -c deploy=${DEPLOY_MODES.join('|')}`);
  return mode as DeployMode;
}

/** The cache's shape (`-c redis`, single when unset) and, for a cluster, its shards and replicas per shard. */
function redisPlanOf(app: App): RedisPlan {
  const shape: unknown = app.node.tryGetContext('redis') ?? 'single';
  if (!REDIS_SHAPES.includes(shape as RedisShape)) throw new Error(`Unknown Redis shape ${JSON.stringify(shape)}: pass -c redis=${REDIS_SHAPES.join('|')}`);
  const nodeType: unknown = app.node.tryGetContext('redisNodeType');
  if (nodeType !== undefined && shape !== 'durable') throw new Error('The context value redisNodeType applies to -c redis=durable only');
  if (shape === 'cluster' || shape === 'durable') {
    const shards = countOf(app, 'redisShards', CLUSTER_SHARDS);
    const replicas = countOf(app, 'redisReplicas', CLUSTER_REPLICAS);
    const nodes = shards * (1 + replicas);
    if (nodes > CLUSTER_NODES_MAX) {
      throw new Error(
        `-c redisShards=${shards} -c redisReplicas=${replicas} asks for ${nodes} cache nodes (shards × (1 + replicas)); ` +
          `the stack makes at most ${CLUSTER_NODES_MAX}, ElastiCache's default quota per cluster: pass fewer shards or replicas`,
      );
    }
    if (shape === 'cluster') return { shape, shards, replicas };
    const family = /^cache\.([a-z0-9]+)\.[a-z0-9]+$/.exec(String(nodeType ?? DURABLE.nodeType))?.[1];
    if (!(DURABLE.nodeFamilies as readonly string[]).includes(family ?? '')) {
      throw new Error(
        `-c redisNodeType=${String(nodeType)}: ElastiCache's durability runs on the node families ${DURABLE.nodeFamilies.join(', ')} only (cache.<family>.<size>)`,
      );
    }
    return { shape, shards, replicas, nodeType: String(nodeType ?? DURABLE.nodeType) };
  }
  // Set for another shape, they would be ignored without a word.
  for (const name of ['redisShards', 'redisReplicas']) {
    if (app.node.tryGetContext(name) !== undefined) throw new Error(`The context value ${name} applies to -c redis=cluster and durable only`);
  }
  return { shape: shape as 'single' | 'serverless' };
}

/** The `alarmEmail` context value, where the alarms are sent; unset, the topic has no subscription. */
function alarmEmailOf(app: App): string | undefined {
  const value: unknown = app.node.tryGetContext('alarmEmail');
  if (value === undefined) return undefined;
  const email = EmailAddress.safeParse(String(value));
  if (!email.success) throw new Error('The context value alarmEmail must be an email address');
  return email.data;
}

/** Stands in for `-c inboundDomain` in a dev stack: a domain nobody's mail goes to, so its rule set receives nothing. */
const PLACEHOLDER_INBOUND_DOMAIN = 'inbound.surge.example';

export function buildApp(app = new App()): { app: App; stack: SurgeStack } {
  const stage = stageOf(app);
  const givenDomain: unknown = app.node.tryGetContext('inboundDomain');
  // A prod stack on the placeholder would deploy, receive no mail, and make admin@inbound.surge.example its first admin.
  if (givenDomain === undefined && stage === 'prod') {
    throw new Error(
      'The prod stage needs the domain SES receives newsletters for: pass -c inboundDomain=mail.example.com (a domain of yours, its MX record pointed at SES)',
    );
  }
  const inboundDomain = String(givenDomain ?? PLACEHOLDER_INBOUND_DOMAIN);
  // Checked here, so that a mistyped address fails the synth rather than the deploy's trigger.
  const adminEmail = EmailAddress.safeParse(String(app.node.tryGetContext('adminEmail') ?? `admin@${inboundDomain}`));
  if (!adminEmail.success) throw new Error('The context value adminEmail must be an email address');
  const alarmEmail = alarmEmailOf(app);
  // A dev stack leaves CloudFront out unless asked: a web ACL and its rules cost by the month.
  const cloudFront = flagOf(app, 'cloudfront', stage === 'prod');
  const region = process.env.CDK_DEFAULT_REGION;
  if (cloudFront && region && region !== CLOUDFRONT_REGION) {
    throw new Error(
      `CloudFront's web ACL can only be made in ${CLOUDFRONT_REGION}: deploy there (AWS_REGION=${CLOUDFRONT_REGION}), or pass -c cloudfront=false`,
    );
  }
  // Caught here, not by CloudFormation halfway through the deploy; a synth with no region (env-agnostic) goes on.
  if (region && REGIONS_WITHOUT_SES_RECEIVING.includes(region)) {
    throw new Error(
      `SES receives no mail in ${region}, so its receipt rule set cannot be made there: deploy to a region that receives, e.g. AWS_REGION=eu-west-1 or us-east-1 (docs/deploy.md, "SES regions")`,
    );
  }
  // By stage, so a prod stack deployed where a dev one is does not update it in place (and replace its Aurora).
  const legacyNames = flagOf(app, 'legacyNames', false);
  const stack = new SurgeStack(app, stackNameOf(stage, legacyNames), {
    stage,
    namePrefix: namePrefixOf(stage, legacyNames),
    inboundDomain,
    adminEmail: adminEmail.data,
    sourceMapStackTraces: String(app.node.tryGetContext('sourceMapStackTraces')) === 'true',
    ...(app.node.tryGetContext('loadTestSources') ? { loadTestSources: String(app.node.tryGetContext('loadTestSources')) } : {}),
    cloudFront,
    // Off unless set: an account's quota may leave no room (at least 100 must stay unreserved, and some new accounts have 10 in all).
    reserveConcurrency: flagOf(app, 'reservedConcurrency', false),
    redis: redisPlanOf(app),
    deploy: deployModeOf(app, stage),
    ...(alarmEmail ? { alarmEmail } : {}),
    env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: cloudFront ? CLOUDFRONT_REGION : region },
  });
  if (givenDomain === undefined) {
    Annotations.of(stack).addWarningV2(
      'surge:inboundDomain',
      `No -c inboundDomain: SES receives mail for ${PLACEHOLDER_INBOUND_DOMAIN}, which no mail is sent to, and the first admin is admin@${PLACEHOLDER_INBOUND_DOMAIN}; pass -c inboundDomain=mail.example.com to receive newsletters`,
    );
  }
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  acknowledgeFindings(stack);
  return { app, stack };
}

if (import.meta.url === `file://${process.argv[1]}`) buildApp().app.synth();
