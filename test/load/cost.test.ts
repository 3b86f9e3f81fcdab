import { describe, expect, it } from 'vitest';
import {
  COST_ITEMS,
  costPerMillionOrders,
  DEFAULT_CAPACITY,
  managedInstancesFor,
  PRICES,
  sizeFor,
  sqsCallsPerOrder,
  type OrderUsage,
} from '../../load/support/cost';

/** Rounded for comparing sums of floating-point products with hand-computed figures. */
const cents = (usd: number) => Math.round(usd * 1e6) / 1e6;

describe('the cost of a million orders on AWS', () => {
  it('prices each item from the figures per order and the capacity, as computed by hand', () => {
    // Prepare: Surge's shape. create-order once an order, 4 billed ms at 512 MB and 336 log bytes;
    // the writer once per 10 orders, 20 billed ms each at 1,024 MB (2 ms an order), 737.741824 log
    // bytes an order. Together 1,073.741824 log bytes an order: exactly 1 GiB a million orders.
    const usage: OrderUsage = {
      lambda: {
        'create-order': { invocations: 1, billed_ms: 4, duration_ms: 3.5, log_bytes: 336, memory_mb: 512 },
        'write-reservations': { invocations: 0.1, billed_ms: 2, duration_ms: 1.9, log_bytes: 737.741824, memory_mb: 1024 },
      },
      sqsRequests: 0.35,
      apiRequests: 1,
    };
    // 720 orders a second: 2,592,000 an hour, so a million orders take 1/2.592 h.
    const capacity = { ordersPerSecond: 720, redisNodes: 2, auroraInstances: 2, auroraAcuPerInstance: 3 };

    // Act
    const cost = costPerMillionOrders(usage, capacity);

    // Assess
    const hours = 1 / 2.592;
    const expected = {
      // 1.1 invocations an order: 1.1 million at $0.20 a million
      lambda_requests: { quantity: 1_100_000, usd: 0.22 },
      // 4 ms × 0.5 GB + 2 ms × 1 GB = 0.004 GB-s an order: 4,000 GB-s at $0.0000133334
      lambda_compute: { quantity: 4_000, usd: 0.0533336 },
      managed_instances: { quantity: 0, usd: 0 },
      api_gateway: { quantity: 1_000_000, usd: 1 },
      // 0.35 requests an order at $0.40 a million
      sqs: { quantity: 350_000, usd: 0.14 },
      logs: { quantity: 1, usd: 0.5 },
      // 2 nodes × 1/2.592 h at $0.0256
      elasticache: { quantity: 2 * hours, usd: 2 * hours * 0.0256 },
      // 6 ACUs × 1/2.592 h at $0.12
      aurora: { quantity: 6 * hours, usd: 6 * hours * 0.12 },
      // 6 ACUs, billed as the proxy's minimum of 8, at $0.015
      rds_proxy: { quantity: 8 * hours, usd: 8 * hours * 0.015 },
    };
    for (const name of COST_ITEMS) {
      expect(cents(cost.items[name].quantity), name).toBe(cents(expected[name].quantity));
      expect(cents(cost.items[name].usd), name).toBe(cents(expected[name].usd));
    }
    // 0.22 + 0.0533336 + 1 + 0.14 + 0.5 + (0.0512 + 0.72 + 0.12) / 2.592
    expect(cents(cost.usd_per_million_orders)).toBe(cents(1.9133336 + 0.8912 / 2.592));
  });

  it('bills the proxy for the ACUs behind it once they pass its minimum, and shares the hours among more orders at a higher load', () => {
    const usage: OrderUsage = { lambda: {}, sqsRequests: 0, apiRequests: 1 };

    const busy = costPerMillionOrders(usage, { ordersPerSecond: 1_000, redisNodes: 6, auroraInstances: 2, auroraAcuPerInstance: 8 });

    // 3.6 million orders an hour: a million take 1/3.6 h; 16 ACUs, above the proxy's 8
    expect(cents(busy.items.rds_proxy.usd)).toBe(cents((16 * 0.015) / 3.6));
    expect(cents(busy.items.aurora.usd)).toBe(cents((16 * 0.12) / 3.6));
    expect(cents(busy.items.elasticache.usd)).toBe(cents((6 * 0.0256) / 3.6));
    expect(busy.items.lambda_requests.usd).toBe(0);
  });

  it('prices functions on Managed Instances by the whole instances their environments hold, at least the provider’s three, and no GB-s', () => {
    // Prepare: create-order on environments of 2,048 MB (one vCPU each), at least three; 0.3 ms of CPU an order
    const usage: OrderUsage = {
      lambda: {
        'create-order': { invocations: 1, billed_ms: 4, duration_ms: 3.5, log_bytes: 336, memory_mb: 2048 },
        'write-reservations': { invocations: 0.1, billed_ms: 2, duration_ms: 1.9, log_bytes: 737.741824, memory_mb: 1024 },
      },
      sqsRequests: 0,
      apiRequests: 1,
      managed: { functions: { 'create-order': { memoryMb: 2048, perEnvironmentConcurrency: 64, minEnvironments: 3 } }, cpuMsPerOrder: 0.3 },
    };
    const at = (ordersPerSecond: number) => costPerMillionOrders(usage, { ordersPerSecond, redisNodes: 0, auroraInstances: 0, auroraAcuPerInstance: 0 });

    // Act
    const quiet = at(720);
    const busy = at(20_000);

    // Assess: 720 a second need 0.432 vCPU at half load, under the three environments' 3 vCPU, which
    // fit two c7g.large but Lambda runs three: 6 vCPU for 1/2.592 h a million orders
    expect(cents(quiet.items.managed_instances.quantity)).toBe(cents(6 / 2.592));
    expect(cents(quiet.items.managed_instances.usd)).toBe(cents((6 / 2.592) * 0.0416875));
    // 20,000 a second need 12 vCPU: twelve environments on six instances, for 1/72 h a million orders
    expect(cents(busy.items.managed_instances.quantity)).toBe(cents(12 / 72));
    // GB-s for the writer alone (2 ms × 1 GB an order), every invocation billed as a request
    expect(cents(quiet.items.lambda_compute.quantity)).toBe(2_000);
    expect(cents(quiet.items.lambda_requests.quantity)).toBe(1_100_000);
    // Logs from both, as on the default compute: 1 GiB a million orders
    expect(cents(quiet.items.logs.quantity)).toBe(1);
  });

  it('holds every managed function’s environments, invoked by the bench or not, on whole instances', () => {
    // Prepare: create-order invoked, create-coupon not; each at least three environments of one vCPU
    const fn = { memoryMb: 2048, perEnvironmentConcurrency: 64, minEnvironments: 3 };
    const managed = { functions: { 'create-order': fn, 'create-coupon': fn }, cpuMsPerOrder: 0.3 };

    // Act
    const quiet = managedInstancesFor(managed, (id) => id === 'create-order', 720);
    const busy = managedInstancesFor(managed, (id) => id === 'create-order', 20_000);

    // Assess: 3 + 3 environments on three c7g.large; at 20,000 a second 12 + 3 vCPU, on eight
    expect(quiet).toEqual({ environments: { 'create-order': 3, 'create-coupon': 3 }, instances: 3 });
    expect(busy).toEqual({ environments: { 'create-order': 12, 'create-coupon': 3 }, instances: 8 });
  });

  it('names each price with its region, its page and the date it is known at', () => {
    for (const price of Object.values(PRICES)) {
      expect(price).toMatchObject({ region: 'us-east-1' });
      expect(price.as_known_at).toMatch(/^2026-12-0[25]$/);
      expect(price.source).toMatch(/^https:\/\/aws\.amazon\.com\//);
    }
    expect(DEFAULT_CAPACITY).toEqual({ ordersPerSecond: 500, redisNodes: 2, auroraInstances: 2, auroraAcuPerInstance: 2 });
  });

  it("counts SQS's actions among the emulator's counts, and nothing else there", () => {
    const calls = {
      SendMessageBatch: 0.1,
      ReceiveMessage: 0.2,
      DeleteMessageBatch: 0.1,
      messages_sent: 1,
      sqs_billed_requests: 0.4,
      'secretsmanager.GetSecretValue': 0.001,
      'S3 PUT': 1,
    };

    expect(cents(sqsCallsPerOrder(calls))).toBe(0.4);
  });
});

describe('sizing a design for a rate of orders', () => {
  it('gives each store what its CPU per order asks at half load, in whole shards and half-ACU steps', () => {
    // Act: 0.03 ms of Redis and 0.05 ms of MySQL an order
    const at500 = sizeFor({ redisMsPerOrder: 0.03, databaseMsPerOrder: 0.05 }, 500);
    const at5000 = sizeFor({ redisMsPerOrder: 0.03, databaseMsPerOrder: 0.05 }, 5_000);

    // Assess: 500/s: Redis 0.015 cores / 0.5 → one shard (two nodes); MySQL 0.025 / 0.5 = 0.05 vCPU = 0.2 ACU → the 0.5 minimum.
    // 5,000/s: Redis 0.15 / 0.5 = 0.3 cores → one shard; MySQL 0.25 / 0.5 = 0.5 vCPU = 2 ACU.
    expect(at500).toMatchObject({
      redisShards: 1,
      reachable: true,
      capacity: { ordersPerSecond: 500, redisNodes: 2, auroraInstances: 2, auroraAcuPerInstance: 0.5 },
    });
    expect(at5000).toMatchObject({ redisShards: 1, reachable: true, capacity: { ordersPerSecond: 5_000, redisNodes: 2, auroraAcuPerInstance: 2 } });
    expect(sizeFor({ redisMsPerOrder: 0.3, databaseMsPerOrder: 0.05 }, 5_000)).toMatchObject({ redisShards: 3, capacity: { redisNodes: 6 } });
  });

  it('says a rate one hot item cannot take in the design is not reachable, and a design without Redis needs no cache', () => {
    // Act
    const locked = sizeFor({ redisMsPerOrder: 0, databaseMsPerOrder: 0.4, hotItemPerSecond: 1_200 }, 5_000);
    const within = sizeFor({ redisMsPerOrder: 0, databaseMsPerOrder: 0.4, hotItemPerSecond: 1_200 }, 500);

    // Assess
    expect(locked).toMatchObject({ reachable: false, redisShards: 0 });
    expect(locked.why).toMatch(/at most 1200 orders a second/);
    expect(within).toMatchObject({ reachable: true, redisShards: 0, capacity: { redisNodes: 0, auroraAcuPerInstance: 2 } });
  });
});
