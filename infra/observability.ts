import { Duration, Stack, type RemovalPolicy } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  Alarm,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  MathExpression,
  Metric,
  TextWidget,
  TreatMissingData,
  type IMetric,
  type IWidget,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { Function as LambdaFn } from 'aws-cdk-lib/aws-lambda';
import type { DatabaseCluster, DatabaseProxy } from 'aws-cdk-lib/aws-rds';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { CacheWatch } from './redis';
import { serviceEnvironment } from '../shared/platform/config';
import { METRICS_NAMESPACE } from '../shared/platform/metrics';

/** The answers of POST /items/{id}/orders, as create-order counts them (`orders.<outcome>`). */
export const ORDER_OUTCOMES = ['accepted', 'soldOut', 'limitExceeded', 'rateLimited', 'unavailable', 'idempotencyMismatch', 'notOnSale'] as const;
/** The answers of POST /deals/{id}/coupons, as create-coupon counts them (`coupons.<outcome>`). */
export const COUPON_OUTCOMES = ['issued', 'soldOut', 'alreadyIssued', 'rateLimited', 'unavailable', 'notOpen', 'closed'] as const;
/** What became of inbound mail, per recipient (shared/mail/outcomes.ts). */
export const MAIL_OUTCOMES = ['filed', 'duplicate', 'muted', 'quarantined', 'dropped', 'rejected'] as const;
export const CACHE_EVENTS = ['hit', 'nearCopyHit', 'fill', 'leaseWait'] as const;
/** A waiting room's flow, buyer by buyer (shared/sale/rooms/rooms.ts, shared/sale/orders/sale.ts): joined, admitted, a pass claimed, an order made with it. */
export const ROOM_FLOW = ['joined', 'admitted', 'claimed', 'converted'] as const;

/** The functions whose failures nothing else shows: the queue's writer, the reconciliation, the mail receiver. */
export const ALARMED_ERRORS = ['write-reservations', 'reconcile-reservations', 'receive-mail'] as const;
/** Above this share of the API's answers being 5xx over 5 minutes, someone is woken. */
export const API_5XX_PERCENT = 1;
/** Fewer requests than this in 5 minutes are too few for a rate: a single 500 at night is not a page. */
export const API_5XX_MIN_REQUESTS = 50;
/** The writer drains a flash sale in seconds; an oldest message this old for 5 minutes means it does not. */
export const QUEUE_AGE_SECONDS = 120;
/** DatabaseMemoryUsagePercentage at 100 refuses writes (noeviction); this leaves time to act. */
export const REDIS_MEMORY_PERCENT = 80;

const MINUTE = Duration.minutes(1);
/** The most metrics an alarm's math may use. */
const ALARM_METRICS = 10;

export interface ObservabilityProps {
  /** Who the alarms e-mail (`-c alarmEmail=…`); without it the topic has no subscription. */
  alarmEmail?: string;
  /** What CloudFormation does with the topic's key when the stack goes (the stage's choice for secrets). */
  keyRemovalPolicy: RemovalPolicy;
  api: HttpApi;
  functions: ReadonlyMap<string, LambdaFn>;
  /** The reservation queue and its DLQ, by the table's queue name. */
  queues: ReadonlyMap<string, { queue: Queue; deadLetters: Queue }>;
  /** Where SES receipt events the mail function could not process end up. */
  mailFailures: readonly Queue[];
  /** Where the cache's metrics are: its nodes (CacheClusterId), or the Serverless cache. */
  cache: CacheWatch;
  database: DatabaseCluster;
  proxy: DatabaseProxy;
}

/** One of Surge's own metrics (shared/platform/metrics.ts): namespace Surge, the service as its one dimension. */
export function surgeMetric(name: string, statistic = 'Sum', period = MINUTE): Metric {
  return new Metric({
    namespace: METRICS_NAMESPACE,
    metricName: name,
    dimensionsMap: { service: serviceEnvironment.POWERTOOLS_SERVICE_NAME },
    statistic,
    period,
  });
}

/** Per second, from a one-minute sum: what a graph of a rate should show. Its metric's id is the label's, unique in a graph. */
const perSecond = (metric: IMetric, label: string) => {
  const id = `m_${label.replace(/\W/g, '_')}`;
  return new MathExpression({ expression: `${id} / PERIOD(${id})`, usingMetrics: { [id]: metric }, label, period: MINUTE });
};

/**
 * What an operator watches and what wakes one: a dashboard of the sale, the queue, the functions,
 * the cache, the database and the API, and the alarms that need a person (each routed to the
 * `Alarms` topic, which e-mails `alarmEmail`). Every alarm is described in the runbook, docs/runbook.md, "Alarms".
 */
export class Observability extends Construct {
  readonly topic: Topic;
  readonly dashboard: Dashboard;
  readonly alarms: Alarm[] = [];

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    // CloudWatch cannot publish to a topic under AWS's managed SNS key, whose policy it is not in.
    const key = new Key(this, 'AlarmsKey', { description: 'Encrypts the Surge alarms topic', enableKeyRotation: true, removalPolicy: props.keyRemovalPolicy });
    key.addToResourcePolicy(
      new PolicyStatement({
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
      }),
    );
    this.topic = new Topic(this, 'Alarms', { displayName: 'Surge alarms', masterKey: key, enforceSSL: true });
    if (props.alarmEmail) this.topic.addSubscription(new EmailSubscription(props.alarmEmail));

    this.alarmsFor(props);
    this.dashboard = new Dashboard(this, 'Dashboard', { dashboardName: `${Stack.of(this).stackName}-operations`, widgets: this.widgets(props) });
  }

  /** One of the alarms, by its id (e.g. `Api5xxRate`): what a gradual deploy rolls back on (stack/gradual.ts). */
  named(id: string): Alarm {
    const alarm = this.alarms.find((a) => a.node.id === id);
    if (!alarm) throw new Error(`No alarm ${id}`);
    return alarm;
  }

  private alarm(id: string, metric: IMetric, threshold: number, description: string, evaluationPeriods = 1, runbook = id): Alarm {
    const alarm = new Alarm(this, id, {
      metric,
      threshold,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      alarmDescription: `${description} Runbook: docs/runbook.md, "Alarms", ${runbook}.`,
    });
    alarm.addAlarmAction(new SnsAction(this.topic));
    alarm.addOkAction(new SnsAction(this.topic));
    this.alarms.push(alarm);
    return alarm;
  }

  private alarmsFor(props: ObservabilityProps): void {
    for (const [name, { queue, deadLetters }] of props.queues) {
      this.alarm(
        `${name}DlqDepth`,
        deadLetters.metricApproximateNumberOfMessagesVisible({ period: MINUTE, statistic: 'Maximum' }),
        0,
        `Messages in the ${name} queue's DLQ: reservations the writer could not store.`,
      );
      this.alarm(
        `${name}QueueAge`,
        queue.metricApproximateAgeOfOldestMessage({ period: MINUTE, statistic: 'Maximum' }),
        QUEUE_AGE_SECONDS,
        `The oldest message in the ${name} queue has waited over ${QUEUE_AGE_SECONDS} s for 5 minutes: the writer is not keeping up or not running.`,
        5,
      );
    }
    for (const failures of props.mailFailures) {
      this.alarm(
        'MailFailuresDepth',
        failures.metricApproximateNumberOfMessagesVisible({ period: MINUTE, statistic: 'Maximum' }),
        0,
        'Receipt events the mail function could not process; the raw mail is still in the bucket.',
      );
    }
    const requests = props.api.metricCount({ period: Duration.minutes(5), statistic: 'Sum' });
    const serverErrors = props.api.metricServerError({ period: Duration.minutes(5), statistic: 'Sum' });
    this.alarm(
      'Api5xxRate',
      new MathExpression({
        expression: `IF(requests >= ${API_5XX_MIN_REQUESTS}, 100 * errors / requests, 0)`,
        usingMetrics: { requests, errors: serverErrors },
        label: 'API 5xx, % of requests',
        period: Duration.minutes(5),
      }),
      API_5XX_PERCENT,
      `Over ${API_5XX_PERCENT} % of the API's answers were 5xx in 5 minutes: functions failing, timing out or throttled.`,
    );
    // Serverless scales its memory instead (no usage limit is set), so only nodes fill up.
    if ('nodes' in props.cache) {
      // An alarm's math takes at most 10 metrics: a larger cluster gets one alarm per 10 nodes.
      for (let first = 0; first < props.cache.nodes.length; first += ALARM_METRICS) {
        const nodes = props.cache.nodes.slice(first, first + ALARM_METRICS);
        this.alarm(
          first === 0 ? 'RedisMemory' : `RedisMemory${first / ALARM_METRICS + 1}`,
          new MathExpression({
            expression: `MAX([${nodes.map((_, i) => `n${i}`).join(', ')}])`,
            usingMetrics: Object.fromEntries(this.cacheMetrics({ nodes }, 'DatabaseMemoryUsagePercentage').map((m, i) => [`n${i}`, m])),
            label: 'Cache memory used, %',
            period: MINUTE,
          }),
          REDIS_MEMORY_PERCENT,
          `The cache's data has used over ${REDIS_MEMORY_PERCENT} % of its memory for 3 minutes; at 100 % it refuses every write (orders, coupons, sign-ins answer 503).`,
          3,
          'RedisMemory',
        );
      }
    }
    // A durable group's log takes writes up to its throughput, and throttles the rest: reservations slow, then time out (503).
    if ('nodes' in props.cache && props.cache.durable) {
      const nodes = props.cache.nodes;
      for (let first = 0; first < nodes.length; first += ALARM_METRICS) {
        const some = nodes.slice(first, first + ALARM_METRICS);
        this.alarm(
          first === 0 ? 'RedisDurabilityThrottled' : `RedisDurabilityThrottled${first / ALARM_METRICS + 1}`,
          new MathExpression({
            expression: `MAX([${some.map((_, i) => `n${i}`).join(', ')}])`,
            usingMetrics: Object.fromEntries(this.cacheMetrics({ nodes: some }, 'TrafficManagementActive').map((m, i) => [`n${i}`, m])),
            label: 'Writes throttled to the durability log',
            period: MINUTE,
          }),
          0,
          "The durable cache throttled writes to its Multi-AZ log's throughput: reservations and sign-ins slow down and may answer 503.",
          1,
          'RedisDurabilityThrottled',
        );
      }
    }
    this.alarm(
      'RedisWritesRefused',
      surgeMetric('redis.writeRefused'),
      0,
      'The cache refused a write (OOM, noeviction): reservations and sign-ins are answering 503.',
    );
    this.alarm(
      'WriterThrottles',
      props.functions.get('write-reservations')!.metricThrottles({ period: MINUTE }),
      0,
      'The writer was throttled: reservations wait in the queue.',
    );
    for (const functionId of ALARMED_ERRORS) {
      this.alarm(`${functionId}Errors`, props.functions.get(functionId)!.metricErrors({ period: MINUTE }), 0, `${functionId} failed an invocation.`);
    }
    this.alarm(
      'GuardRejections',
      new MathExpression({
        expression: 'orders + coupons',
        usingMetrics: { orders: surgeMetric('orders.guardRejected'), coupons: surgeMetric('coupons.guardRejected') },
        label: 'Rejected by the database guard',
        period: MINUTE,
      }),
      0,
      'The database guard refused a reservation Redis had accepted (it would have oversold): Redis and MySQL disagree.',
    );
    this.alarm(
      'HandOffFailures',
      new MathExpression({
        expression: 'orders + coupons',
        usingMetrics: { orders: surgeMetric('orders.handOffCompensated'), coupons: surgeMetric('coupons.handOffCompensated') },
        label: 'Reservations given back: hand-off failed',
        period: MINUTE,
      }),
      0,
      'A reservation could not be handed to the queue and was given back (the buyer was answered 503): SQS unreachable or slow, or the reserving code failing.',
    );
    this.alarm(
      'StoredWithoutOutbox',
      new MathExpression({
        expression: 'orders + coupons',
        usingMetrics: { orders: surgeMetric('orders.storedWithoutOutbox'), coupons: surgeMetric('coupons.storedWithoutOutbox') },
        label: 'Stored with no outbox entry',
        period: MINUTE,
      }),
      0,
      'The writer stored reservations Redis had no outbox entry for: Redis lost writes (a failover, a restart); the writer repaired the sale or deal.',
    );
  }

  /** One metric per node, or the Serverless cache's one (whose metrics are per cache: `clusterId`). */
  private cacheMetrics(cache: CacheWatch, metricName: string, statistic = 'Maximum'): IMetric[] {
    const dimensions = 'nodes' in cache ? cache.nodes.map((node) => ({ CacheClusterId: node })) : [{ clusterId: cache.serverless }];
    return dimensions.map(
      (dimensionsMap) =>
        new Metric({
          namespace: 'AWS/ElastiCache',
          metricName,
          dimensionsMap,
          statistic,
          period: MINUTE,
          label: `${metricName} ${Object.values(dimensionsMap)[0]}`,
        }),
    );
  }

  private widgets(props: ObservabilityProps): IWidget[][] {
    const graph = (title: string, left: IMetric[], right: IMetric[] = []) => new GraphWidget({ title, left, right, width: 8, height: 6 });
    const fns = [...props.functions.entries()];
    const perFunction = (what: (fn: LambdaFn) => IMetric) => fns.map(([, fn]) => what(fn));
    const rds = (metricName: string, dimensionsMap: Record<string, string>, label: string) =>
      new Metric({ namespace: 'AWS/RDS', metricName, dimensionsMap, statistic: 'Maximum', period: MINUTE, label });
    const { queue, deadLetters } = [...props.queues.values()][0]!;
    return [
      [new TextWidget({ markdown: '# Surge\nAlarms and what to do about each: docs/runbook.md, "Alarms".', width: 24, height: 1 })],
      [
        graph(
          'Orders per second, by outcome',
          ORDER_OUTCOMES.map((o) => perSecond(surgeMetric(`orders.${o}`), o)),
        ),
        graph(
          'Coupons per second, by outcome',
          COUPON_OUTCOMES.map((o) => perSecond(surgeMetric(`coupons.${o}`), o)),
        ),
        graph(
          'Writer lag, reserved → stored (ms)',
          ['p50', 'p99', 'Maximum'].map((s) => surgeMetric('orders.writerLag', s).with({ label: `orders ${s}` })),
          [surgeMetric('coupons.writerLag', 'p99').with({ label: 'coupons p99' })],
        ),
      ],
      [
        graph(
          'Reservation queue: depth and age of the oldest message (s)',
          [queue.metricApproximateNumberOfMessagesVisible({ period: MINUTE, statistic: 'Maximum' })],
          [queue.metricApproximateAgeOfOldestMessage({ period: MINUTE, statistic: 'Maximum' })],
        ),
        graph('Dead letters', [
          deadLetters.metricApproximateNumberOfMessagesVisible({ period: MINUTE, statistic: 'Maximum' }),
          ...props.mailFailures.map((q) => q.metricApproximateNumberOfMessagesVisible({ period: MINUTE, statistic: 'Maximum' })),
        ]),
        graph('Guard rejections, stored without outbox, compensated hand-offs', [
          ...['guardRejected', 'storedWithoutOutbox', 'handOffCompensated'].flatMap((event) =>
            ['orders', 'coupons'].map((kind) => surgeMetric(`${kind}.${event}`).with({ label: `${kind} ${event}` })),
          ),
        ]),
      ],
      [
        graph(
          'Errors per function',
          perFunction((fn) => fn.metricErrors({ period: MINUTE })),
        ),
        graph(
          'Throttles per function',
          perFunction((fn) => fn.metricThrottles({ period: MINUTE })),
        ),
        graph(
          'Concurrency per function',
          perFunction((fn) => fn.metric('ConcurrentExecutions', { period: MINUTE, statistic: 'Maximum' })),
        ),
      ],
      [
        ...('nodes' in props.cache
          ? [
              graph('Cache CPU (engine, %)', this.cacheMetrics(props.cache, 'EngineCPUUtilization')),
              graph('Cache memory used (%)', this.cacheMetrics(props.cache, 'DatabaseMemoryUsagePercentage'), [
                surgeMetric('redis.writeRefused').with({ label: 'writes refused' }),
              ]),
              graph(
                'Cache evictions and replication lag (s)',
                this.cacheMetrics(props.cache, 'Evictions', 'Sum'),
                this.cacheMetrics(props.cache, 'ReplicationLag'),
              ),
            ]
          : [
              graph('Cache processing units (ECPUs)', this.cacheMetrics(props.cache, 'ElastiCacheProcessingUnits', 'Sum')),
              graph('Cache data stored (bytes)', this.cacheMetrics(props.cache, 'BytesUsedForCache'), [
                surgeMetric('redis.writeRefused').with({ label: 'writes refused' }),
              ]),
              graph(
                'Cache evictions and throttled commands',
                this.cacheMetrics(props.cache, 'Evictions', 'Sum'),
                this.cacheMetrics(props.cache, 'ThrottledCmds', 'Sum'),
              ),
            ]),
      ],
      [
        graph(
          'Catalog cache',
          CACHE_EVENTS.map((e) => surgeMetric(`cache.${e}`).with({ label: e })),
        ),
        graph('Aurora and RDS Proxy connections', [
          props.database.metricDatabaseConnections({ period: MINUTE, statistic: 'Maximum', label: 'Aurora' }),
          rds('DatabaseConnections', { ProxyName: props.proxy.dbProxyName }, 'proxy → Aurora'),
          rds('ClientConnections', { ProxyName: props.proxy.dbProxyName }, 'functions → proxy'),
          // Held by one client each until it disconnects: the writer's and receive-mail's statements
          // over 16 KB pin theirs (docs/twin.md, RDS Proxy), which this shows while they are not fixed.
          rds('DatabaseConnectionsCurrentlySessionPinned', { ProxyName: props.proxy.dbProxyName }, 'pinned to one client'),
        ]),
        graph(
          'Mail, by outcome',
          MAIL_OUTCOMES.map((o) => surgeMetric(`mail.${o}`).with({ label: o })),
        ),
      ],
      [
        graph(
          'Waiting rooms: joined, admitted, claimed, converted',
          ROOM_FLOW.map((e) => surgeMetric(`room.${e}`).with({ label: e })),
        ),
        graph(
          'Waiting rooms: passes expired, places lost',
          ['expiredPasses', 'lostPlaces'].map((e) => surgeMetric(`room.${e}`).with({ label: e })),
        ),
        // Levels: the largest a minute saw, not a sum.
        graph(
          'Waiting rooms: waiting, and the oldest wait (ms)',
          [surgeMetric('room.waiting', 'Maximum').with({ label: 'waiting' })],
          [surgeMetric('room.oldestWait', 'Maximum').with({ label: 'oldest wait' })],
        ),
      ],
      [
        graph('API 4xx and 5xx', [
          props.api.metricClientError({ period: MINUTE, statistic: 'Sum' }),
          props.api.metricServerError({ period: MINUTE, statistic: 'Sum' }),
        ]),
        graph(
          'API latency (ms)',
          ['p50', 'p99'].map((s) => props.api.metricLatency({ period: MINUTE, statistic: s, label: s })),
        ),
        graph('API requests per second', [perSecond(props.api.metricCount({ period: MINUTE, statistic: 'Sum' }), 'requests')]),
      ],
    ];
  }
}
