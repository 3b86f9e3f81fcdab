/** The stack's the cache (infra/redis.ts). */
import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../infra/app';
import { envNeedsOf, functions } from '../../../functions/table';
import {
  DYNAMIC_REFERENCE,
  redisIngressOf,
  statefulIn,
  STATEFUL_DEV,
  STATEFUL_CACHE,
  synthesizedShape as synthesized,
  expectClusterEnvironment,
} from '../../support/stack-fixtures';
import { template, resources, ofType, logicalIdOf, functionOf } from '../../support/dev-stack';
import * as prod from '../../support/prod-stack';

describe('the CDK app (dev)', () => {
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
});

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
