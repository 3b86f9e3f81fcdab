/**
 * `npm run cost -- <bench JSON> [<bench JSON> …] [--rates 500,5000]`
 * `npm run cost -- <bench JSON> --orders-per-second N [--redis-nodes N] [--aurora-instances N] [--aurora-acu [design=]N …]`
 *
 * What a million orders (or coupons) cost on AWS for Surge and each MySQL design of an orders or
 * coupons bench: reads each bench's result (the JSON line `npm run bench -- orders` prints last; a
 * file holding the whole run's stdout will do) and prices each design's measured figures per order
 * with the model of support/cost.ts. By default at each of --rates, every design sized for that
 * rate from its own measured Redis and MySQL CPU per order and the rate one hot item took in its
 * contended run (sizeFor: a design that cannot reach a rate is said to, not priced); with
 * --orders-per-second, at the stack's instances or those given. Prints a table per design and
 * rate, writes an HTML report with a bar chart (load/reports/cost-<time>.html, its SVG beside it),
 * then one JSON object as its last line.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import {
  COST_ITEMS,
  costPerMillionOrders,
  DEFAULT_CAPACITY,
  PRICES,
  managedInstancesFor,
  SIZING,
  sizeFor,
  sqsCallsPerOrder,
  type Capacity,
  type CostItemName,
  type DesignCost,
} from './support/cost';
import { functions } from '../functions/table';
import { escapeHtml } from './support/html';
import { REPORTS_DIR } from './support/report';
import { barChart, type BarRow } from './support/summary';
import { round } from './support/round';

const usage =
  'usage: npm run cost -- <bench JSON file> [<bench JSON file> …] [--rates 500,5000] | [--orders-per-second N] [--redis-nodes N] [--aurora-instances N] [--aurora-acu [design=]N …]';

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
      /** CPU per order by component (support/cpu-split.ts): Redis's and MariaDB's size the stores. */
      cpu_ms_per_request: z.record(z.string(), z.number()).optional(),
    }),
  ),
  /** The contended runs: the most a hot item took a second, Surge's script and each baseline. */
  contended: z.object({ script_per_s: z.number(), baselines_per_s: z.record(z.string(), z.number()) }).optional(),
});
type BenchResult = z.infer<typeof benchResult>;

/** The design whose SQS figures the bench reports at its top level. */
const SURGE = 'surge';

/** Surge's functions on Lambda Managed Instances (functions/table.ts), priced by their instances; the baselines' run on Lambda's default compute. */
const SURGE_MANAGED = Object.fromEntries(functions.flatMap((f) => (f.managedInstances ? [[f.id, { ...f.managedInstances, memoryMb: f.memoryMb }]] : [])));
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
    rates: { type: 'string', default: '500,5000' },
    'orders-per-second': { type: 'string' },
    'redis-nodes': { type: 'string' },
    'aurora-instances': { type: 'string' },
    'aurora-acu': { type: 'string', multiple: true },
  },
});
if (positionals.length < 1) {
  process.stderr.write(`${usage}\n`);
  process.exit(2);
}
const positive = (name: string, value: string | undefined, fallback: number) => {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!(n > 0)) throw new Error(`--${name} ${value}: a positive number`);
  return n;
};
/** Given instances (any of the capacity options): priced at them, as the stack's are by default; otherwise sized per rate. */
const given = ['orders-per-second', 'redis-nodes', 'aurora-instances', 'aurora-acu'].some((name) => values[name as keyof typeof values] !== undefined);
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
if (given && positionals.length > 1)
  throw new Error('instances given price one bench: give one bench JSON, or none of the instance options to size each for --rates');
const rates = given ? [base.ordersPerSecond] : values.rates.split(',').map((r) => positive('rates', r, 0));

interface Priced {
  bench: string;
  design: string;
  label: string | undefined;
  ordersPerSecond: number;
  capacity: Capacity;
  sqs: ReturnType<typeof sqsOf>;
  /** Undefined where the design cannot take the rate. */
  cost?: DesignCost;
  sizing: string;
}

const priced: Priced[] = positionals.flatMap((file) => {
  const bench = readBench(file);
  const name = bench.scenario ?? file;
  return Object.entries(bench.comparison).flatMap(([design, figures]) => {
    if (design === CEILING || !figures.lambda_per_request) return [];
    const sqs = sqsOf(figures.sqs_calls_per_order ?? (design === SURGE ? bench.sqs_calls_per_order : undefined));
    const usage = {
      lambda: figures.lambda_per_request,
      sqsRequests: sqs.requests,
      apiRequests: figures.http_requests_per_order ?? 1,
      // Sized for all of the design's functions' CPU an order; without a profile, for their minimum of environments.
      ...(design === SURGE ? { managed: { functions: SURGE_MANAGED, cpuMsPerOrder: figures.cpu_ms_per_request?.functions ?? 0 } } : {}),
    };
    /** What the managed functions hold at a rate, said beside the stores' sizes. */
    const managedSized = (ordersPerSecond: number) => {
      if (!usage.managed) return '';
      const { environments, instances } = managedInstancesFor(usage.managed, (id) => id in usage.lambda, ordersPerSecond);
      const each = Object.entries(environments).map(([id, n]) => `${n} of ${id}`);
      return `; ${instances} c7g.large of Managed Instances for the environments (${each.join(', ')})`;
    };
    return rates.map((ordersPerSecond): Priced => {
      if (given) {
        const capacity = { ...base, auroraAcuPerInstance: acuFor(design) };
        return {
          bench: name,
          design,
          label: figures.label,
          ordersPerSecond,
          capacity,
          sqs,
          cost: costPerMillionOrders(usage, capacity),
          sizing: `the instances given${managedSized(ordersPerSecond)}`,
        };
      }
      if (!figures.cpu_ms_per_request)
        throw new Error(
          `${file}: ${design} carries no CPU per order by component (a bench without profiles): give --orders-per-second and the instances instead`,
        );
      const hotItemPerSecond = design === SURGE ? bench.contended?.script_per_s : bench.contended?.baselines_per_s[design];
      const sizing = sizeFor(
        {
          redisMsPerOrder: figures.cpu_ms_per_request.redis ?? 0,
          databaseMsPerOrder: figures.cpu_ms_per_request.mariadb ?? 0,
          ...(hotItemPerSecond ? { hotItemPerSecond } : {}),
        },
        ordersPerSecond,
      );
      return {
        bench: name,
        design,
        label: figures.label,
        ordersPerSecond,
        capacity: sizing.capacity,
        sqs,
        ...(sizing.reachable ? { cost: costPerMillionOrders(usage, sizing.capacity) } : {}),
        sizing: `${sizing.why}${managedSized(ordersPerSecond)}`,
      };
    });
  });
});
if (priced.length === 0) throw new Error(`${positionals.join(', ')}: no design of comparison carries lambda_per_request`);

const LABELS: Record<CostItemName, string> = {
  lambda_requests: 'Lambda requests',
  lambda_compute: 'Lambda compute',
  managed_instances: 'Lambda Managed Instances',
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
  const lines = all.map((row) =>
    `  ${row
      .slice(0, 3)
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join('  ')}  ${row[3]!.padStart(8)}  ${row[4]}`.trimEnd(),
  );
  const heading =
    `${design}${label ? ` — ${label}` : ''}: $${usd(cost.usd_per_million_orders)} per million orders ` +
    `(${capacity.ordersPerSecond} orders/s for an hour; ${capacity.redisNodes} cache nodes; Aurora ${capacity.auroraInstances} × ${capacity.auroraAcuPerInstance} ACU; SQS from ${sqsMeasured})`;
  return [heading, ...lines].join('\n');
}

for (const p of priced) {
  if (given) process.stdout.write(`${table(p.design, p.label, p.capacity, p.cost!, p.sqs.measured)}\n\n`);
  else if (p.cost) process.stdout.write(`${p.bench}, ${table(p.design, p.label, p.capacity, p.cost, p.sqs.measured)}\n  sized: ${p.sizing}\n\n`);
  else process.stdout.write(`${p.bench}, ${p.design}${p.label ? ` — ${p.label}` : ''} at ${p.ordersPerSecond} orders/s: not reachable: ${p.sizing}\n\n`);
}
process.stdout.write(
  given
    ? `USD per million orders: ${priced.map((p) => `${p.design} ${usd(p.cost!.usd_per_million_orders)}`).join(', ')}\n`
    : `USD per million: ${priced.map((p) => `${p.bench} ${p.design} @${p.ordersPerSecond}/s ${p.cost ? usd(p.cost.usd_per_million_orders) : 'not reachable'}`).join(', ')}\n`,
);
process.stdout.write(
  `Prices: on-demand list prices as known at ${[...new Set(Object.values(PRICES).map((p) => p.as_known_at))].join(' or ')}, not read from AWS's pages; each one's page and date are in the JSON below.\n`,
);
for (const file of positionals) {
  const runAs = readBench(file).functions_run_as;
  // One shared instance answers many invocations at once: each one's duration includes the others' turns on the event loop.
  if (!runAs?.includes("Lambda's instance model"))
    process.stdout.write(
      `Durations in ${file}: measured ${runAs ?? 'with one shared instance per function'}, so they include waiting for other invocations' CPU; a bench run with --lambda-instances N measures them as Lambda runs them.\n`,
    );
}
if (!given) process.stdout.write(`Sizing: ${JSON.stringify(SIZING)} (support/cost.ts, sizeFor: its assumptions are stated there).\n`);

/** One bar per design and rate, Surge's dark; a design that cannot take a rate has none, and says why. */
const rows: BarRow[] = priced.map((p) => ({
  key: p.design,
  // The design's key, not its label: the chart cuts a label at 46 characters, and the rate must show.
  label: `${p.bench}: ${p.design} @ ${p.ordersPerSecond.toLocaleString('en-US')}/s`,
  segments: p.cost ? [{ value: round(p.cost.usd_per_million_orders, 2), fill: p.design === SURGE ? '#1f5fa8' : '#8fa9c4' }] : [],
  note: p.cost ? `$${p.cost.usd_per_million_orders.toFixed(2)}` : 'not reachable (one hot item)',
}));
const chart = barChart('cost-per-million', 'USD per million orders, each design sized for the rate', rows);
mkdirSync(REPORTS_DIR, { recursive: true });
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const svgFile = join(REPORTS_DIR, `cost-${stamp}.svg`);
writeFileSync(svgFile, chart);
const htmlFile = join(REPORTS_DIR, `cost-${stamp}.html`);
writeFileSync(
  htmlFile,
  `<!doctype html><meta charset="utf-8"><title>Surge: what a million orders cost</title><style>body{font:14px system-ui;margin:24px} svg.bars text.note{fill:#444}</style>
<h1>What a million orders cost</h1><p>${escapeHtml(positionals.join(', '))}; sizing ${escapeHtml(given ? 'as given' : JSON.stringify(SIZING))}.</p>${chart}
<ul>${priced.map((p) => `<li>${escapeHtml(`${p.bench}, ${p.design} @ ${p.ordersPerSecond}/s: ${p.cost ? `$${p.cost.usd_per_million_orders.toFixed(4)}` : 'not reachable'} — ${p.sizing}`)}</li>`).join('')}</ul>`,
);
process.stderr.write(`cost: report ${htmlFile}, chart ${svgFile}\n`);
/** The JSON's figures to a millionth of a dollar, quantities to four decimals. */
const rounded = (cost: DesignCost) => ({
  items: Object.fromEntries(
    COST_ITEMS.map((name) => [name, { ...cost.items[name], quantity: round(cost.items[name].quantity, 4), usd: round(cost.items[name].usd, 6) }]),
  ),
  usd_per_million_orders: round(cost.usd_per_million_orders, 6),
});
// Instances given: each design of the one bench at them, by name. Sized: each bench's designs at each rate, in a list.
const result = given
  ? {
      scenario: priced[0]!.bench,
      prices: PRICES,
      designs: Object.fromEntries(priced.map((p) => [p.design, { capacity: p.capacity, sqs_requests_from: p.sqs.measured, ...rounded(p.cost!) }])),
    }
  : {
      benches: positionals,
      prices: PRICES,
      sizing: SIZING,
      sized: priced.map((p) => ({
        bench: p.bench,
        design: p.design,
        orders_per_second: p.ordersPerSecond,
        capacity: p.capacity,
        sized: p.sizing,
        sqs_requests_from: p.sqs.measured,
        ...(p.cost ? rounded(p.cost) : { reachable: false }),
      })),
    };
process.stdout.write(`${JSON.stringify({ ...result, report: htmlFile, chart: svgFile })}\n`);
