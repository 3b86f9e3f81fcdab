import { RemovalPolicy, type Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { CfnParameterGroup, CfnReplicationGroup, CfnServerlessCache, CfnSubnetGroup, CfnUser, CfnUserGroup } from 'aws-cdk-lib/aws-elasticache';
import { Secret, type ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Deployment } from '../shared/platform/config';

/** The shapes the cache can take, chosen with `-c redis=…`. */
export const REDIS_SHAPES = ['single', 'cluster', 'serverless', 'durable'] as const;
export type RedisShape = (typeof REDIS_SHAPES)[number];

/** What `-c redis=…`, `-c redisShards=…`, `-c redisReplicas=…` and `-c redisNodeType=…` ask for. */
export type RedisPlan =
  | { shape: 'single' }
  | { shape: 'cluster'; shards: number; replicas: number }
  | { shape: 'serverless' }
  | { shape: 'durable'; shards: number; replicas: number; nodeType: string };

/**
 * The durable shape: ElastiCache for Valkey's synchronous durability, each write in a Multi-AZ
 * transactional log before the reply (https://docs.aws.amazon.com/AmazonElastiCache/latest/dg/durability.html).
 * Its limits (Durability.Limitations): Valkey 9.0 or later, chosen at creation; cluster mode
 * enabled, Multi-AZ with at least one replica per shard, TLS; node-based only (not Serverless), of
 * the families below; up to 100 MiB/s of writes per primary.
 */
export const DURABLE = {
  engineVersion: '9.0',
  nodeFamilies: ['r8g', 'r7g', 'r6g', 'm8g', 'm7g', 'm6g', 'c8gn', 'c7gn'],
  /** The smallest general-purpose node of a family it takes; t4g, the other shapes', is not one. */
  nodeType: 'cache.m7g.large',
} as const;

/** ElastiCache's bounds: a replication group has at most 500 shards, each at most 5 replicas; Multi-AZ failover needs one. */
export const CLUSTER_SHARDS = { min: 1, max: 500, byDefault: 3 } as const;
export const CLUSTER_REPLICAS = { min: 1, max: 5, byDefault: 1 } as const;
/**
 * The most nodes (shards × (1 + replicas)) a cluster may ask for: ElastiCache's default quota of
 * nodes per cluster, which an account raises on request up to 500, where the template, listing
 * every node in the dashboard and its alarms, would pass CloudFormation's 1 MB. Within both bounds
 * shards and replicas could ask for 3,000.
 */
export const CLUSTER_NODES_MAX = 90;

/**
 * The Serverless cache's one user: on, every key, every channel, every command. The channels must
 * be named: Redis 7 gives a user none unless told (`acl-pubsub-default resetchannels`), and the
 * cache's fill wake-ups are sharded pub/sub, so without `&*` each SSUBSCRIBE and each fill script's
 * SPUBLISH is refused NOPERM and every waiter sits out its lease (test/infra/serverless-acl.test.ts).
 */
export const SERVERLESS_ACCESS_STRING = 'on ~* &* +@all';

/** A replication group's port: not the default, so a scan for 6379 does not find it. Serverless has no choice: 6379. */
const REPLICATION_GROUP_PORT = 6380;
const SERVERLESS_PORT = 6379;
const ENGINE = 'valkey';
const ENGINE_VERSION = '8.0';
const ENGINE_MAJOR = ENGINE_VERSION.split('.')[0]!;
/** The parameter group family follows the engine version: valkey8 for 8.x. */
const PARAMETER_GROUP_FAMILY = `${ENGINE}${ENGINE_MAJOR}`;
const DURABLE_PARAMETER_GROUP_FAMILY = `${ENGINE}${DURABLE.engineVersion.split('.')[0]}`;
const NODE_TYPE = 'cache.t4g.small';

/**
 * Evicting nothing: the default volatile-lru picks among keys with a TTL, and idempotency records,
 * sessions, their index and fill leases all have one. A full node refuses writes (reservations
 * answer 503, catalog fills are skipped) and serves reads, and the catalog's entries, all expiring
 * within minutes, give their memory back: no second node for what could be evicted. The reserve,
 * AWS's advice for small burstable nodes, is room for backup, replication and clients.
 */
const NO_EVICTION = { 'maxmemory-policy': 'noeviction', 'reserved-memory-percent': '30' } as const;

/**
 * A primary that has heard from no replica for this long refuses writes (NOREPLICAS: a retry-safe
 * 503) rather than take writes a failover would lose; the twin's primary/replica pair runs the same.
 * Reservations wait for a replica themselves (WAIT, REDIS_REPLICA_ACKS); this holds the rest, the
 * sessions and rates and a reservation's own release, to the same rule within the lag. 10 s is
 * Redis's own default lag: a replica acknowledges every second, so only one cut off or stalled
 * misses it, and a replica being replaced (minutes) stops writes until its successor has synced.
 */
export const MIN_REPLICAS = { 'min-replicas-to-write': '1', 'min-replicas-max-lag': '10' } as const;

/** The replicas a primary with MIN_REPLICAS counts good from its INFO replication: a write needs one. */
export function goodReplicas(replicationInfo: string): number {
  return Number(/^min_slaves_good_slaves:(\d+)/m.exec(replicationInfo)?.[1] ?? 0);
}

export interface CacheProps {
  plan: RedisPlan;
  /** Names what must be unique in the account and region (the serverless cache, its user and group). */
  name: string;
  vpc: ec2.IVpc;
  /** The only clients: the functions' security group. */
  clients: ec2.ISecurityGroup;
  /** What CloudFormation does with the cache when it is deleted or replaced: SNAPSHOT takes a final one. */
  removalPolicy: RemovalPolicy;
}

export interface Cache {
  /** Where the functions reach it: the need `redis` of shared/platform/config.ts. */
  redis: Deployment['redis'];
  /** The AUTH token, which the functions using Redis may read. */
  auth: ISecret;
  /** Where CloudWatch has its metrics (infra/observability.ts): per node (CacheClusterId) of a replication group, or per Serverless cache. */
  watch: CacheWatch;
}

/** A durable group's nodes say so: they publish its own metrics (TrafficManagementActive: writes throttled to the log's throughput). */
export type CacheWatch = { nodes: string[]; durable?: true } | { serverless: string };

/** A replication group's node ids, as ElastiCache names them: `<group>-<shard>-<node>` with cluster mode, `<group>-<node>` without. */
const nodeIds = (group: string, shards: number | undefined, nodesPerShard: number) =>
  (shards === undefined ? [''] : Array.from({ length: shards }, (_, s) => `-${String(s + 1).padStart(4, '0')}`)).flatMap((shard) =>
    Array.from({ length: nodesPerShard }, (_, n) => `${group}${shard}-${String(n + 1).padStart(3, '0')}`),
  );

/**
 * The cache in its chosen shape, always TLS in transit, encrypted at rest, Multi-AZ, and reached
 * with the AUTH token of one Secrets Manager secret (RedisAuth). Its constructs are the stack's
 * own children, so the single shape keeps the logical ids it had before shapes existed; each other
 * shape has ids of its own, so switching makes a new cache rather than an impossible in-place change.
 */
export function addCache(stack: Stack, props: CacheProps): Cache {
  const { plan, vpc, clients } = props;
  const securityGroup = new ec2.SecurityGroup(stack, 'RedisSg', { vpc, description: 'ElastiCache, from functions only', allowAllOutbound: false });
  const auth = new Secret(stack, 'RedisAuth', {
    description: 'ElastiCache AUTH token',
    generateSecretString: { passwordLength: 64, excludePunctuation: true },
  });
  // Resolved by CloudFormation into the cache's own copy; the functions read the secret.
  const token = auth.secretValue.unsafeUnwrap();
  const subnetIds = vpc.isolatedSubnets.map((s) => s.subnetId);

  if (plan.shape === 'serverless') {
    securityGroup.addIngressRule(clients, ec2.Port.tcp(SERVERLESS_PORT), 'functions to Redis');
    // Serverless takes no AUTH token: access is by user group (RBAC). A user named `default` is
    // the one a password-only AUTH signs in as, so the functions' client sends the same AUTH as on
    // a replication group. Rotating: modify the user with the old and the new password (both are
    // accepted), put the new one in the secret, then modify it with the new one alone.
    const user = new CfnUser(stack, 'RedisUser', {
      userId: `${props.name}-default`,
      userName: 'default',
      engine: ENGINE,
      accessString: SERVERLESS_ACCESS_STRING,
      authenticationMode: { Type: 'password', Passwords: [token] },
    });
    const users = new CfnUserGroup(stack, 'RedisUsers', { userGroupId: props.name, engine: ENGINE, userIds: [user.userId] });
    users.addResourceDependency(user);
    const cache = new CfnServerlessCache(stack, 'RedisServerless', {
      serverlessCacheName: props.name,
      description: 'Surge live state: stock, sessions, cache',
      engine: ENGINE,
      majorEngineVersion: ENGINE_MAJOR,
      userGroupId: users.userGroupId,
      subnetIds,
      securityGroupIds: [securityGroup.securityGroupId],
      snapshotRetentionLimit: 1,
      // No usage limits: at a data-storage maximum Serverless evicts keys with a TTL (its fixed
      // volatile-lru), which here are idempotency records and sessions, so it scales instead.
      // CloudFormation has no Snapshot deletion policy for it: the final snapshot is named.
      ...(props.removalPolicy === RemovalPolicy.SNAPSHOT ? { finalSnapshotName: `${props.name}-final` } : {}),
    });
    cache.addResourceDependency(users);
    cache.applyRemovalPolicy(props.removalPolicy === RemovalPolicy.SNAPSHOT ? RemovalPolicy.DESTROY : props.removalPolicy);
    // No WAIT: whether Serverless serves it is not documented, so its promise is asynchronous replication's (docs/deploy.md).
    return {
      redis: { url: `rediss://${cache.attrEndpointAddress}:${cache.attrEndpointPort}`, authSecretId: auth.secretArn, cluster: true, replicaAcks: 0 },
      auth,
      watch: { serverless: props.name },
    };
  }

  securityGroup.addIngressRule(clients, ec2.Port.tcp(REPLICATION_GROUP_PORT), 'functions to Redis');
  const subnets = new CfnSubnetGroup(stack, 'RedisSubnets', { description: 'Surge cache', subnetIds });
  const common = {
    replicationGroupDescription: 'Surge live state: stock, sessions, cache',
    engine: ENGINE,
    engineVersion: ENGINE_VERSION,
    cacheNodeType: NODE_TYPE,
    multiAzEnabled: true,
    automaticFailoverEnabled: true,
    transitEncryptionEnabled: true,
    atRestEncryptionEnabled: true,
    // CloudFormation has no update strategy for the token, so rotating is an operation: modify the
    // group with a new token and AuthTokenUpdateStrategy ROTATE (old and new both accepted), put the
    // new one in the secret, then modify with SET; functions then refused (WRONGPASS) re-read the secret.
    authToken: token,
    port: REPLICATION_GROUP_PORT,
    cacheSubnetGroupName: subnets.ref,
    securityGroupIds: [securityGroup.securityGroupId],
    snapshotRetentionLimit: 1,
  };

  if (plan.shape === 'durable') {
    // Cluster mode, as durability requires; the store waits for the log itself, so the functions do not WAIT
    // and no min-replicas-to-write is set: a write it answered is in two AZs whatever the replicas do.
    const parameters = new CfnParameterGroup(stack, 'RedisDurableParameters', {
      description: 'Surge cache, durable: no eviction, 30 % of memory reserved beyond the data, cluster mode',
      cacheParameterGroupFamily: DURABLE_PARAMETER_GROUP_FAMILY,
      properties: { ...NO_EVICTION, 'cluster-enabled': 'yes' },
    });
    const cache = new CfnReplicationGroup(stack, 'RedisDurable', {
      ...common,
      engineVersion: DURABLE.engineVersion,
      cacheNodeType: plan.nodeType,
      clusterMode: 'enabled',
      numNodeGroups: plan.shards,
      replicasPerNodeGroup: plan.replicas,
      cacheParameterGroupName: parameters.ref,
      durability: 'sync',
    });
    cache.applyRemovalPolicy(props.removalPolicy);
    return {
      redis: {
        url: `rediss://${cache.attrConfigurationEndPointAddress}:${cache.attrConfigurationEndPointPort}`,
        authSecretId: auth.secretArn,
        cluster: true,
        replicaAcks: 0,
      },
      auth,
      watch: { nodes: nodeIds(cache.ref, plan.shards, plan.replicas + 1), durable: true },
    };
  }

  if (plan.shape === 'cluster') {
    // Each shard is a primary and its replicas, the replicas in other AZs; every key a script or
    // pipeline touches shares one hash tag, so one slot, so one shard.
    const parameters = new CfnParameterGroup(stack, 'RedisClusterParameters', {
      description: 'Surge cache, cluster mode: no eviction, 30 % of memory reserved beyond the data',
      cacheParameterGroupFamily: PARAMETER_GROUP_FAMILY,
      properties: { ...NO_EVICTION, ...MIN_REPLICAS, 'cluster-enabled': 'yes' },
    });
    const cache = new CfnReplicationGroup(stack, 'RedisCluster', {
      ...common,
      clusterMode: 'enabled',
      numNodeGroups: plan.shards,
      replicasPerNodeGroup: plan.replicas,
      cacheParameterGroupName: parameters.ref,
    });
    // Its automatic snapshots go with it; SNAPSHOT takes a final one first.
    cache.applyRemovalPolicy(props.removalPolicy);
    return {
      redis: {
        url: `rediss://${cache.attrConfigurationEndPointAddress}:${cache.attrConfigurationEndPointPort}`,
        authSecretId: auth.secretArn,
        cluster: true,
        replicaAcks: 1,
      },
      auth,
      watch: { nodes: nodeIds(cache.ref, plan.shards, plan.replicas + 1) },
    };
  }

  const parameters = new CfnParameterGroup(stack, 'RedisParameters', {
    description: 'Surge cache: no eviction, 30 % of memory reserved beyond the data',
    cacheParameterGroupFamily: PARAMETER_GROUP_FAMILY,
    properties: { ...NO_EVICTION, ...MIN_REPLICAS },
  });
  const cache = new CfnReplicationGroup(stack, 'Redis', { ...common, numCacheClusters: 2, cacheParameterGroupName: parameters.ref });
  cache.applyRemovalPolicy(props.removalPolicy);
  return {
    redis: { url: `rediss://${cache.attrPrimaryEndPointAddress}:${REPLICATION_GROUP_PORT}`, authSecretId: auth.secretArn, replicaAcks: 1 },
    auth,
    watch: { nodes: nodeIds(cache.ref, undefined, 2) },
  };
}
