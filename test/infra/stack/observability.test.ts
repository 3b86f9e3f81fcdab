/** The stack's alarms, logs and the dashboard (infra/observability.ts). */
import { readFileSync } from 'node:fs';
import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { functions } from '../../../functions/table';
import { stack, template, resources, ofType, logicalIdOf, alarmsById, alarmsTopicId } from '../../support/dev-stack';
import * as prod from '../../support/prod-stack';

describe('the CDK app (dev)', () => {
  it('has every function, CDK’s helpers and the password rotation’s included, log to a group of the stack', () => {
    for (const [id, fn] of Object.entries(resources).filter(([, r]) => r.Type === 'AWS::Lambda::Function')) {
      expect(resources[fn.Properties.LoggingConfig?.LogGroup?.Ref]?.Type, id).toBe('AWS::Logs::LogGroup');
    }
    const [rotation] = ofType('AWS::Serverless::Application');
    const rotationLogs = logicalIdOf('AWS::Logs::LogGroup', (r) => r.Properties.LogGroupName === `/aws/lambda/${rotation!.Properties.Parameters.functionName}`);
    expect(rotation!.DependsOn).toContain(rotationLogs);
  });

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
    expect(graph('Aurora and RDS Proxy connections')).toMatch(/"DatabaseConnections".*"ClientConnections".*"DatabaseConnectionsCurrentlySessionPinned"/);
    expect(graph('API 4xx and 5xx')).toMatch(/"4xx".*"5xx"/);
    expect(graph('API latency (ms)')).toContain('"Latency"');
    for (const event of ['joined', 'admitted', 'claimed', 'converted'])
      expect(graph('Waiting rooms: joined, admitted, claimed, converted')).toContain(`"room.${event}"`);
    expect(graph('Waiting rooms: waiting, and the oldest wait (ms)')).toMatch(/"room.waiting".*"room.oldestWait"/);
  });
});

describe('the CDK app in the prod stage', () => {
  it('e-mails the alarms to the address of -c alarmEmail', () => {
    const topic = Object.keys(prod.resources).find(
      (id) => prod.resources[id]!.Type === 'AWS::SNS::Topic' && prod.resources[id]!.Properties.DisplayName === 'Surge alarms',
    )!;
    expect(prod.ofType('AWS::SNS::Subscription').map((r) => r.Properties)).toEqual([
      { Protocol: 'email', Endpoint: 'ops@example.com', TopicArn: { Ref: topic } },
    ]);
  });
});
