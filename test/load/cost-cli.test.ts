import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const FIXTURE = 'test/events/bench/orders.json';
const run = promisify(execFile);
/** `npm run cost -- …`, as node runs its script: stdout and the last line's JSON. */
async function cost(...args: string[]) {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'load/cost.ts', ...args]);
  const lines = stdout.trimEnd().split('\n');
  return {
    stdout,
    json: JSON.parse(lines[lines.length - 1]!) as {
      designs: Record<string, { usd_per_million_orders: number; sqs_requests_from: string; items: Record<string, { usd: number }> }>;
    },
  };
}

describe('npm run cost', () => {
  const dir = mkdtempSync(join(tmpdir(), 'surge-cost-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("prices each design of an orders bench's result but the gateway's ceiling, a table each and the JSON last", async () => {
    // Act: the MySQL FOR UPDATE design held at 4 ACUs an instance, the others at the default 2
    const { stdout, json } = await cost(FIXTURE, '--aurora-acu', 'for_update=4');

    // Assess: Surge by hand, at 500 orders/s (1.8 million an hour):
    //   Lambda requests 1.1 × $0.20 = 0.22; compute, the writer's alone (create-order is on Managed
    //   Instances): 2.6423 ms × 0.5 GB = 1,321.15 GB-s a million × $0.0000133334 = 0.017615;
    //   the capacity provider's three c7g.large (create-order's three environments of one vCPU, its
    //   1.9 ms of CPU an order needing 1.9 vCPU at half load, and create-coupon's three): 6 vCPU ×
    //   $0.0416875 / 1.8 = 0.138958; HTTP API 1.00; SQS 0.2168 × $0.40 = 0.08672;
    //   logs 335.99 bytes × 10^6 / 2^30 × $0.50 = 0.156458; cache 2 × $0.0256 / 1.8 = 0.028444;
    //   Aurora 4 ACU × $0.12 / 1.8 = 0.266667; proxy 8 ACU × $0.015 / 1.8 = 0.066667
    expect(Object.keys(json.designs)).toEqual(['surge', 'for_update', 'conditional_transaction', 'conditional_autocommit']);
    expect(json.designs.surge!.usd_per_million_orders).toBeCloseTo(1.981529, 6);
    expect(json.designs.surge!.sqs_requests_from).toBe('sqs_billed_requests');
    // FOR UPDATE: 1 × 0.20 + 48.2107 × 0.5 × 10^3 × $0.0000133334 + 1.00 + 268.04 × 10^6 / 2^30 × 0.50
    //   + 0.028444 + 8 ACU × $0.12 / 1.8 + the proxy's minimum 0.066667
    expect(json.designs.for_update!.items.aurora!.usd).toBeCloseTo(0.533333, 6);
    expect(json.designs.for_update!.usd_per_million_orders).toBeCloseTo(0.2 + 0.321406 + 1 + 0.124816 + 0.028444 + 0.533333 + 0.066667, 5);
    expect(json.designs.for_update!.sqs_requests_from).toBe('none');
    expect(stdout).toContain(
      'surge — Surge (Redis script, SQS, writer): $1.9815 per million orders (500 orders/s for an hour; 2 cache nodes; Aurora 2 × 2 ACU; SQS from sqs_billed_requests)',
    );
    expect(stdout).toMatch(/^ {2}Lambda compute +1,321 GB-s +\$0\.0000133334 \/ GB-s +0\.0176 +Arm/m);
    expect(stdout).toMatch(/^ {2}Lambda Managed Instances +3\.333 vCPU-hours +\$0\.0416875 \/ vCPU-hour +0\.1390 /m);
    expect(stdout).toContain('for_update — FOR UPDATE: $2.2747 per million orders');
  });

  it("reads a run's whole output, npm's lines before the JSON, and takes SQS calls one request each when it has no billed count", async () => {
    // Prepare: what `npm run bench -- orders > run.txt` leaves, from a bench before billed counts
    const bench = JSON.parse(readFileSync(FIXTURE, 'utf8'));
    delete bench.sqs_calls_per_order.sqs_billed_requests;
    const file = join(dir, 'run.txt');
    writeFileSync(file, `\n> surge@0.1.0 bench\n> exec tsx load/bench.ts orders\n\n${JSON.stringify(bench)}\n`);

    // Act
    const { json } = await cost(file, '--orders-per-second', '1000');

    // Assess: 0.0125 + 0.1043 + 0.1 SQS calls an order, $0.40 a million; the hours shared among 3.6 million orders
    expect(json.designs.surge!.sqs_requests_from).toBe('calls, one request each');
    expect(json.designs.surge!.items.sqs!.usd).toBeCloseTo(0.2168 * 0.4, 6);
    expect(json.designs.surge!.items.aurora!.usd).toBeCloseTo((4 * 0.12) / 3.6, 6);
  });

  it('sizes each design for each rate from its measured CPU, and says which one hot item keeps from a rate', async () => {
    // Prepare: the fixture with its contended runs: the script 20,000 a second, FOR UPDATE 900
    const bench = JSON.parse(readFileSync(FIXTURE, 'utf8'));
    bench.contended = { script_per_s: 20_000, baselines_per_s: { for_update: 900, conditional_transaction: 3_000, conditional_autocommit: 6_000 } };
    const file = join(dir, 'contended.json');
    writeFileSync(file, JSON.stringify(bench));

    // Act
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'load/cost.ts', file, '--rates', '500,5000']);
    const json = JSON.parse(stdout.trimEnd().split('\n').pop()!) as {
      sized: { design: string; orders_per_second: number; reachable?: false; usd_per_million_orders?: number }[];
      chart: string;
    };

    // Assess: every design at 500/s; at 5,000 only Surge and the autocommit upper bound
    const reachable = (rate: number) => json.sized.filter((p) => p.orders_per_second === rate && p.reachable !== false).map((p) => p.design);
    expect(reachable(500)).toEqual(['surge', 'for_update', 'conditional_transaction', 'conditional_autocommit']);
    expect(reachable(5_000)).toEqual(['surge', 'conditional_autocommit']);
    expect(stdout).toMatch(/for_update — FOR UPDATE at 5000 orders\/s: not reachable: one hot item took at most 900 orders a second/);
    // Surge's managed functions: the provider's three instances for both functions' minimum at 500 a second
    expect(stdout).toContain('3 c7g.large of Managed Instances for the environments (3 of create-order, 3 of create-coupon)');
    expect(readFileSync(json.chart, 'utf8')).toContain('<svg');
    rmSync(json.chart.replace(/\.svg$/, '.html'));
    rmSync(json.chart);
  });
});
