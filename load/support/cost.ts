/**
 * What a million orders cost on AWS, from what the twin measured per order (each function's
 * invocations, billed milliseconds and log bytes: support/invocations.ts; SQS requests: the
 * emulator's counts) and the instances chosen for a stated sustained load. A pure function: the
 * bench's figures and a capacity in, US dollars per million orders out, item by item.
 *
 * Prices are us-east-1 on-demand list prices as known at 2026-12-02: AWS's pricing pages could not
 * be read from here (their stored copies draw the figures client-side), so these are the published
 * list prices as this model knows them, each with the page to check it against. Left out: free
 * tiers, Aurora storage and I/O (Aurora Standard bills I/O per million requests; the twin's
 * MariaDB says nothing of Aurora's), log storage, VPC endpoints, data transfer, CloudFront and WAF,
 * and Lambda's INIT billing (the twin warms its functions before traffic and meters no cold start).
 */
import type { ManagedInstances } from '../../functions/table';
import type { LambdaPerRequest } from './invocations';

export interface Price {
  usd: number;
  /** What usd buys. */
  per: string;
  /** The terms that come with it: tier, engine, what a unit counts. */
  note: string;
  region: 'us-east-1';
  source: string;
  /** Not read from the page today: the published list price as known at this date. */
  as_known_at: string;
}

const KNOWN_AT = '2026-12-02';
const price = (usd: number, per: string, note: string, source: string, knownAt = KNOWN_AT): Price => ({
  usd,
  per,
  note,
  region: 'us-east-1',
  source,
  as_known_at: knownAt,
});

export const PRICES = {
  lambdaRequests: price(0.2, '1M requests', 'every invocation, an SQS batch one', 'https://aws.amazon.com/lambda/pricing/'),
  // The stack's functions are Arm (infra/stack/functions.ts); x86 is 0.0000166667.
  lambdaGbSecond: price(0.0000133334, 'GB-s', 'Arm, first 7.5 billion GB-s a month', 'https://aws.amazon.com/lambda/pricing/'),
  httpApiRequests: price(
    1.0,
    '1M requests',
    'HTTP API, first 300 million a month; each 512 KB of a request one request',
    'https://aws.amazon.com/api-gateway/pricing/',
  ),
  sqsRequests: price(0.4, '1M requests', 'standard queue; each 64 KB chunk of a payload one request', 'https://aws.amazon.com/sqs/pricing/'),
  logsIngestion: price(
    0.5,
    'GB ingested',
    'Standard log class, GB = 2^30 bytes; Lambda logs from this price down, first 10 TB a month',
    'https://aws.amazon.com/cloudwatch/pricing/',
  ),
  // The stack's cache (infra/redis.ts): node-based Valkey is priced 20% below Redis OSS (0.032 for this node).
  elasticacheNodeHour: price(0.0256, 'node-hour', 'cache.t4g.small, Valkey, on demand', 'https://aws.amazon.com/elasticache/pricing/'),
  auroraAcuHour: price(
    0.12,
    'ACU-hour',
    'Aurora MySQL Serverless v2, Aurora Standard (its I/O billed apart, left out)',
    'https://aws.amazon.com/rds/aurora/pricing/',
  ),
  rdsProxyAcuHour: price(0.015, 'ACU-hour', 'of the Serverless v2 capacity behind the proxy, at least 8 ACUs', 'https://aws.amazon.com/rds/proxy/pricing/'),
  // c7g.large (2 vCPU, 4 GiB: the 2 GiB a vCPU the stack asks for) at $0.0725 an hour, plus Lambda's management fee of 15 % of it.
  managedVcpuHour: price(
    0.0416875,
    'vCPU-hour',
    'Lambda Managed Instances on c7g (Graviton, 2 GiB a vCPU): the instance at $0.0725 an hour for 2 vCPU and a 15 % management fee; no GB-s',
    'https://aws.amazon.com/lambda/pricing/',
    '2026-12-05',
  ),
} as const satisfies Record<string, Price>;

export type Prices = Record<keyof typeof PRICES, Pick<Price, 'usd'>>;

/** RDS Proxy bills a Serverless v2 cluster for at least this many ACUs. */
export const RDS_PROXY_MIN_ACUS = 8;

/** What one order of a design used, as the bench measured it. */
export interface OrderUsage {
  /** Each function's figures per order: perRequest(before, after, orders) over the design's run. */
  lambda: Record<string, LambdaPerRequest>;
  /** SQS requests per order as billed, each 64 KB chunk of a payload one request. */
  sqsRequests: number;
  /** API Gateway requests per order: each order one POST. */
  apiRequests: number;
  /**
   * The design's functions on Lambda Managed Instances, by id, priced by the capacity provider's
   * instances rather than GB-s: every one of them holds its environments through the sale whether
   * the bench invoked it or not; one it invoked is sized for cpuMsPerOrder, the design's
   * functions' whole CPU an order as the bench profiled it, an upper bound of its own.
   */
  managed?: { functions: Record<string, ManagedInstances & { memoryMb: number }>; cpuMsPerOrder: number };
}

/**
 * The instances a design runs on during the sale, and the sale's load: the fixed hourly costs are
 * shared among the orders of that hour. Outside the sale the same instances cost the same, and
 * no order pays for them here.
 */
export interface Capacity {
  /** Orders a second, sustained for an hour-long sale. */
  ordersPerSecond: number;
  /** ElastiCache nodes (cache.t4g.small). */
  redisNodes: number;
  /** Aurora Serverless v2 instances, writer and readers. */
  auroraInstances: number;
  /** The capacity each holds through the sale. */
  auroraAcuPerInstance: number;
}

/**
 * The stack's own shapes at a load the twin has shown: 500 orders a second for an hour (1.8 million
 * orders; the reference run took 10,000 at about 600 a second on two cores). The cache's default
 * shape is a primary and a replica (infra/redis.ts), the database a writer and a reader that
 * scales with it (infra/stack/database.ts), here held at 2 ACUs each: a choice, not a measurement.
 */
export const DEFAULT_CAPACITY: Capacity = { ordersPerSecond: 500, redisNodes: 2, auroraInstances: 2, auroraAcuPerInstance: 2 };

export const COST_ITEMS = [
  'lambda_requests',
  'lambda_compute',
  'managed_instances',
  'api_gateway',
  'sqs',
  'logs',
  'elasticache',
  'aurora',
  'rds_proxy',
] as const;
export type CostItemName = (typeof COST_ITEMS)[number];

/** One item per million orders: how much of its unit, at what price, for how many dollars. */
export interface CostItem {
  quantity: number;
  unit: string;
  price: keyof typeof PRICES;
  usd: number;
}

export interface DesignCost {
  items: Record<CostItemName, CostItem>;
  usd_per_million_orders: number;
}

const MILLION = 1_000_000;
const GIB = 2 ** 30;

/**
 * The capacity provider's instances (infra/stack/functions.ts): c7g, priced at c7g.large's two
 * vCPUs; Lambda runs at least three of them, spread over the AZs, whatever the environments need.
 */
export const MANAGED_INSTANCES = { vcpusPerInstance: 2, minInstances: 3 } as const;

/** A managed execution environment's vCPUs: the stack gives each 2 GiB a vCPU (infra/stack/functions.ts). */
const vcpusOfEnvironment = (memoryMb: number) => memoryMb / 1024 / 2;

/**
 * The environments a function on Managed Instances holds through the sale: its minimum, or more
 * where the load's CPU asks for them at the sizing's utilisation (Lambda scales on CPU).
 */
export function managedEnvironments(fn: ManagedInstances & { memoryMb: number }, cpuMsPerOrder: number, ordersPerSecond: number): number {
  const forLoad = (ordersPerSecond * cpuMsPerOrder) / 1000 / SIZING.utilisation;
  return Math.max(fn.minEnvironments, Math.ceil(forLoad / vcpusOfEnvironment(fn.memoryMb)));
}

/** The instances the design's managed functions hold at a rate: whole ones, at least the provider's minimum. */
export function managedInstancesFor(managed: NonNullable<OrderUsage['managed']>, invoked: (id: string) => boolean, ordersPerSecond: number) {
  const environments = Object.fromEntries(
    Object.entries(managed.functions).map(([id, fn]) => [id, managedEnvironments(fn, invoked(id) ? managed.cpuMsPerOrder : 0, ordersPerSecond)]),
  );
  const vcpus = Object.entries(environments).reduce((total, [id, n]) => total + n * vcpusOfEnvironment(managed.functions[id]!.memoryMb), 0);
  return { environments, instances: Math.max(MANAGED_INSTANCES.minInstances, Math.ceil(vcpus / MANAGED_INSTANCES.vcpusPerInstance)) };
}

/** US dollars per million orders of one design, item by item. */
export function costPerMillionOrders(usage: OrderUsage, capacity: Capacity, prices: Prices = PRICES): DesignCost {
  const managed = usage.managed?.functions ?? {};
  const all = Object.entries(usage.lambda);
  // Requests and logs are billed alike on either compute; GB-s only on the default one.
  const sum = (f: (fn: LambdaPerRequest) => number, of = all) => of.reduce((total, [, fn]) => total + f(fn), 0);
  const onDefaultCompute = all.filter(([id]) => !(id in managed));
  const managedVcpus = usage.managed
    ? managedInstancesFor(usage.managed, (id) => id in usage.lambda, capacity.ordersPerSecond).instances * MANAGED_INSTANCES.vcpusPerInstance
    : 0;
  const ordersPerHour = capacity.ordersPerSecond * 3600;
  const hoursPerMillion = MILLION / ordersPerHour;
  const auroraAcus = capacity.auroraInstances * capacity.auroraAcuPerInstance;
  const item = (quantity: number, unit: string, key: keyof typeof PRICES, unitsPerPrice = 1): CostItem => ({
    quantity,
    unit,
    price: key,
    usd: (quantity / unitsPerPrice) * prices[key].usd,
  });
  const items: Record<CostItemName, CostItem> = {
    lambda_requests: item(sum((fn) => fn.invocations) * MILLION, 'invocations', 'lambdaRequests', MILLION),
    lambda_compute: item(sum((fn) => (fn.billed_ms / 1000) * (fn.memory_mb / 1024), onDefaultCompute) * MILLION, 'GB-s', 'lambdaGbSecond'),
    managed_instances: item(managedVcpus * hoursPerMillion, 'vCPU-hours', 'managedVcpuHour'),
    api_gateway: item(usage.apiRequests * MILLION, 'requests', 'httpApiRequests', MILLION),
    sqs: item(usage.sqsRequests * MILLION, 'requests', 'sqsRequests', MILLION),
    logs: item((sum((fn) => fn.log_bytes) * MILLION) / GIB, 'GB', 'logsIngestion'),
    elasticache: item(capacity.redisNodes * hoursPerMillion, 'node-hours', 'elasticacheNodeHour'),
    aurora: item(auroraAcus * hoursPerMillion, 'ACU-hours', 'auroraAcuHour'),
    rds_proxy: item(Math.max(RDS_PROXY_MIN_ACUS, auroraAcus) * hoursPerMillion, 'ACU-hours', 'rdsProxyAcuHour'),
  };
  return { items, usd_per_million_orders: COST_ITEMS.reduce((total, name) => total + items[name].usd, 0) };
}

/**
 * SQS API calls per order from the bench's counts by action (sqs_calls_per_order): SQS's actions
 * are capitalised names (SendMessageBatch, ReceiveMessage, …); the emulator's other counts there
 * (messages_sent, secretsmanager.GetSecretValue, S3 …) are not SQS requests.
 */
export function sqsCallsPerOrder(callsByAction: Record<string, number>): number {
  return Object.entries(callsByAction).reduce((total, [action, n]) => total + (/^[A-Z][A-Za-z]+$/.test(action) ? n : 0), 0);
}

/**
 * What a design needs to take a sustained rate of orders, from what its bench measured per order:
 * the Redis and MariaDB CPU per order (its product's share, support/cpu-split.ts), and the rate one
 * hot item allows at all (the contended runs: MySQL's designs queue on the item's row lock, Surge's
 * script on the item's Redis slot). Assumptions, stated: a core of AWS's as fast as one of the
 * machine that measured; each store held at half its CPU through the sale; Redis single-threaded,
 * one core a shard, each shard a primary and a replica; an Aurora Serverless v2 ACU about a quarter
 * of a vCPU (2 GiB of memory and its share of CPU), in half-ACU steps from 0.5, the writer and one
 * reader of the same size. Lambda scales itself and is priced per use, so it needs no size here.
 */
export interface SizingFigures {
  redisMsPerOrder: number;
  databaseMsPerOrder: number;
  /** The most orders a second one hot item took in the design's contended run. */
  hotItemPerSecond?: number;
}

export interface Sizing {
  capacity: Capacity;
  redisShards: number;
  /** False when one hot item cannot take this rate in the design, at any size. */
  reachable: boolean;
  why: string;
}

export const SIZING = { utilisation: 0.5, vcpuPerAcu: 0.25, acuStep: 0.5, minAcu: 0.5, auroraInstances: 2, nodesPerShard: 2 } as const;

export function sizeFor(figures: SizingFigures, ordersPerSecond: number): Sizing {
  const coresOf = (msPerOrder: number) => (ordersPerSecond * msPerOrder) / 1000 / SIZING.utilisation;
  const redisShards = figures.redisMsPerOrder > 0.001 ? Math.max(1, Math.ceil(coresOf(figures.redisMsPerOrder))) : 0;
  const acu = Math.max(SIZING.minAcu, Math.ceil(coresOf(figures.databaseMsPerOrder) / SIZING.vcpuPerAcu / SIZING.acuStep) * SIZING.acuStep);
  const reachable = figures.hotItemPerSecond === undefined || ordersPerSecond <= figures.hotItemPerSecond;
  return {
    capacity: { ordersPerSecond, redisNodes: redisShards * SIZING.nodesPerShard, auroraInstances: SIZING.auroraInstances, auroraAcuPerInstance: acu },
    redisShards,
    reachable,
    why: reachable
      ? `${redisShards ? `${redisShards} Redis shard(s) for ${round4(figures.redisMsPerOrder)} ms of Redis an order; ` : ''}${acu} ACU a database instance for ${round4(figures.databaseMsPerOrder)} ms of MySQL an order`
      : `one hot item took at most ${Math.round(figures.hotItemPerSecond!)} orders a second in this design's contended run, whatever its size`,
  };
}

const round4 = (n: number) => Math.round(n * 10_000) / 10_000;
