/**
 * `npm run cost -- <bench JSON> [--orders-per-second N] [--redis-nodes N] [--aurora-instances N] [--aurora-acu [design=]N …]`
 *
 * What a million orders would cost on AWS for Surge and each MySQL design of an orders bench:
 * reads the bench's result (the JSON line `npm run bench -- orders` prints last; a file holding
 * the whole run's stdout will do), prices each design's measured figures per order with the
 * model of support/cost.ts, prints a table per design, then one JSON object as its last line.
 * The instances are those of the stack by default, held through an hour-long sale at 500 orders a
 * second; --aurora-acu gives every design, or the one named, another capacity per instance.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { COST_ITEMS, costPerMillionOrders, DEFAULT_CAPACITY, PRICES, sqsCallsPerOrder, type Capacity, type CostItemName, type DesignCost } from './support/cost';
import { round } from './support/round';

const usage = 'usage: npm run cost -- <bench JSON file> [--orders-per-second N] [--redis-nodes N] [--aurora-instances N] [--aurora-acu [design=]N …]';

const functionFigures = z.object({ invocations: z.number(), billed_ms: z.number(), duration_ms: z.number(), log_bytes: z.number(), memory_mb: z.number() });
const sqsCalls = z.record(z.string(), z.number());
/**
 * What the cost is made from: each design's Lambda figures per order, and SQS's (Surge's, at the
 * top level, as the orders bench reports them). A design without Lambda figures is not priced.
 */
const benchResult = z.object({
  scenario: z.string().optional(),
  functions_run_as: z.string().optional(),
  sqs_calls_per_order: sqsCalls.optional(),
  comparison: z.record(
    z.string(),
    z.object({
      label: z.string().optional(),
      lambda_per_request: z.record(z.string(), functionFigures).optional(),
      sqs_calls_per_order: sqsCalls.optional(),
      http_requests_per_order: z.number().optional(),
    }),
  ),
});
type BenchResult = z.infer<typeof benchResult>;

/** The design whose SQS figures the bench reports at its top level. */
const SURGE = 'surge';
/** The bench compares the gateway's ceiling as a design too (load/bench.ts): a trivial function, no way of taking an order. */
const CEILING = 'ceiling';

/** The bench's result: the file's JSON, or the last line of a run's output. */
function readBench(path: string): BenchResult {
  const text = readFileSync(path, 'utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = JSON.parse(text.trim().split('\n').pop() ?? '');
  }
  return benchResult.parse(json);
}

/** SQS requests per order as billed: the emulator's chunk count when the bench carries it, else one request per SQS call. */
function sqsOf(calls: Record<string, number> | undefined): { requests: number; measured: 'sqs_billed_requests' | 'calls, one request each' | 'none' } {
  if (!calls) return { requests: 0, measured: 'none' };
  if (calls.sqs_billed_requests !== undefined) return { requests: calls.sqs_billed_requests, measured: 'sqs_billed_requests' };
  return { requests: sqsCallsPerOrder(calls), measured: 'calls, one request each' };
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    'orders-per-second': { type: 'string' },
    'redis-nodes': { type: 'string' },
    'aurora-instances': { type: 'string' },
    'aurora-acu': { type: 'string', multiple: true },
  },
});
if (positionals.length !== 1) {
  process.stderr.write(`${usage}\n`);
  process.exit(2);
}
const positive = (name: string, value: string | undefined, fallback: number) => {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!(n > 0)) throw new Error(`--${name} ${value}: a positive number`);
  return n;
};
const base: Capacity = {
  ordersPerSecond: positive('orders-per-second', values['orders-per-second'], DEFAULT_CAPACITY.ordersPerSecond),
  redisNodes: positive('redis-nodes', values['redis-nodes'], DEFAULT_CAPACITY.redisNodes),
  auroraInstances: positive('aurora-instances', values['aurora-instances'], DEFAULT_CAPACITY.auroraInstances),
  auroraAcuPerInstance: DEFAULT_CAPACITY.auroraAcuPerInstance,
};
/** --aurora-acu N for every design, --aurora-acu design=N for one; the later wins. */
const acuFor = (design: string) =>
  (values['aurora-acu'] ?? []).reduce((acu, option) => {
    const [named, n] = option.includes('=') ? option.split('=', 2) : [undefined, option];
    return named === undefined || named === design ? positive('aurora-acu', n, acu) : acu;
  }, base.auroraAcuPerInstance);

const bench = readBench(positionals[0]!);
const designs = Object.entries(bench.comparison).flatMap(([design, figures]) => {
  if (design === CEILING || !figures.lambda_per_request) return [];
  const capacity = { ...base, auroraAcuPerInstance: acuFor(design) };
  const sqs = sqsOf(figures.sqs_calls_per_order ?? (design === SURGE ? bench.sqs_calls_per_order : undefined));
  const cost = costPerMillionOrders({ lambda: figures.lambda_per_request, sqsRequests: sqs.requests, apiRequests: figures.http_requests_per_order ?? 1 }, capacity);
  return [{ design, label: figures.label, capacity, sqs, cost }];
});
if (designs.length === 0) throw new Error(`${positionals[0]}: no design of comparison carries lambda_per_request`);

const LABELS: Record<CostItemName, string> = {
  lambda_requests: 'Lambda requests',
  lambda_compute: 'Lambda compute',
  api_gateway: 'API Gateway HTTP API',
  sqs: 'SQS requests',
  logs: 'CloudWatch Logs ingestion',
  elasticache: 'ElastiCache nodes',
  aurora: 'Aurora Serverless v2',
  rds_proxy: 'RDS Proxy',
};
const quantity = (n: number) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : Number(n.toPrecision(4)).toString());
const usd = (n: number) => n.toFixed(4);

function table(design: string, label: string | undefined, capacity: Capacity, cost: DesignCost, sqsMeasured: string): string {
  const rows = COST_ITEMS.map((name) => {
    const item = cost.items[name];
    const price = PRICES[item.price];
    return [LABELS[name], `${quantity(item.quantity)} ${item.unit}`, `$${price.usd} / ${price.per}`, usd(item.usd), price.note];
  });
  const all = [['item', 'per million orders', 'price', 'USD', 'terms (us-east-1)'], ...rows, ['total', '', '', usd(cost.usd_per_million_orders), '']];
  const widths = [0, 1, 2].map((i) => Math.max(...all.map((row) => row[i]!.length)));
  const lines = all.map((row) => `  ${row.slice(0, 3).map((cell, i) => cell.padEnd(widths[i]!)).join('  ')}  ${row[3]!.padStart(8)}  ${row[4]}`.trimEnd());
  const heading =
    `${design}${label ? ` — ${label}` : ''}: $${usd(cost.usd_per_million_orders)} per million orders ` +
    `(${capacity.ordersPerSecond} orders/s for an hour; ${capacity.redisNodes} cache nodes; Aurora ${capacity.auroraInstances} × ${capacity.auroraAcuPerInstance} ACU; SQS from ${sqsMeasured})`;
  return [heading, ...lines].join('\n');
}

for (const { design, label, capacity, cost, sqs } of designs) process.stdout.write(`${table(design, label, capacity, cost, sqs.measured)}\n\n`);
process.stdout.write(`USD per million orders: ${designs.map(({ design, cost }) => `${design} ${usd(cost.usd_per_million_orders)}`).join(', ')}\n`);
if (!bench.functions_run_as?.includes("Lambda's instance model")) {
  // One shared instance answers many invocations at once: each one's duration includes the others' turns on the event loop.
  process.stdout.write(`Durations: measured ${bench.functions_run_as ?? 'with one shared instance per function'}, so they include waiting for other invocations' CPU; a bench run with --lambda-instances N measures them as Lambda runs them.\n`);
}
process.stdout.write(`Prices: on-demand list prices as known at ${PRICES.lambdaRequests.as_known_at}, not read from AWS's pages today; each one's page is in the JSON below.\n`);
/** The JSON's figures to a millionth of a dollar, quantities to four decimals. */
const rounded = (cost: DesignCost) => ({
  items: Object.fromEntries(COST_ITEMS.map((name) => [name, { ...cost.items[name], quantity: round(cost.items[name].quantity, 4), usd: round(cost.items[name].usd, 6) }])),
  usd_per_million_orders: round(cost.usd_per_million_orders, 6),
});
process.stdout.write(
  `${JSON.stringify({
    scenario: bench.scenario,
    prices: PRICES,
    designs: Object.fromEntries(designs.map(({ design, capacity, sqs, cost }) => [design, { capacity, sqs_requests_from: sqs.measured, ...rounded(cost) }])),
  })}\n`,
);
