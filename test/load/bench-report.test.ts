/**
 * A bench report opened as a person opens it, in headless Chromium (Debian's), with nothing but
 * the file: it leads with Surge against the designs it is compared with, then the invariants, then
 * the timelines, a few series to a chart; and what its charts drew must be the numbers of the JSON
 * it embeds.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PRODUCT_COMPONENTS, STAND_IN_COMPONENTS, type DesignComparison } from '../../load/support/cpu-components';
import { drive } from '../../load/support/measure';
import { writeReport, type BenchReport } from '../../load/support/report';
import { startTimeline, type PhaseSeries, type TimelineData } from '../../load/support/timeline';

const CHROMIUM = '/usr/bin/chromium';
const FIXTURE = 'test/events/bench/orders-comparison.json';
/** "A few series per chart": more than this and a chart's lines cannot be told apart. */
const MOST_SERIES_PER_CHART = 6;

interface Bar {
  chart: string;
  design: string;
  component: string | null;
  kind: string | null;
  value: number;
  width: number;
  fill: string;
}

interface Drawn {
  charts: Record<string, { labels: string[]; data: (number | null)[][] }>;
  bench: BenchReport & { invariants: Record<string, { expected: unknown; actual: unknown; ok: boolean }>; timeline: TimelineData };
  /** The ids of the page's parts, in the order they come. */
  parts: string[];
  rawOpen: boolean;
  comparisonRows: string[][];
  comparisonNote: string;
  bars: Bar[];
  topFunctions: string[][];
  invariantRows: { verdict: string; cells: string[] }[];
  invariantsVerdict: { className: string; text: string };
  loops: string[];
  requests: string[];
}

type Series = { label: string; points: [number, number][] };
const zip = (t: number[], y: number[]) => t.map((x, i): [number, number] => [x, y[i]!]);

/** Each drawn series as its (x, y) points, leaving out where it has none. */
function drawnSeries(chart: { labels: string[]; data: (number | null)[][] }): Series[] {
  const [xs, ...columns] = chart.data;
  return chart.labels.map((label, i) => ({
    label,
    points: xs!.flatMap((x, j) => (columns[i]![j] === null ? [] : [[x!, columns[i]![j]!] as [number, number]])),
  }));
}

/** What each family of charts ("throughput-1", "throughput-2", … are one) should show, in order, read straight from the timeline in the report's JSON. */
function expectedSeries(timeline: TimelineData): Record<string, Series[]> {
  const byPhase = (key: 'rps' | 'p99_ms') => timeline.phases.map((p) => ({ label: p.label, points: zip(p.t, p[key]) }));
  const percentile = (label: string, key: 'p50_ms' | 'p90_ms' | 'p99_ms' | 'p999_ms' | 'max_ms') => ({
    label,
    points: timeline.phases.flatMap((p) => zip(p.t, p[key])),
  });
  return {
    throughput: byPhase('rps'),
    p99: byPhase('p99_ms'),
    percentiles: [
      percentile('p50', 'p50_ms'),
      percentile('p90', 'p90_ms'),
      percentile('p99', 'p99_ms'),
      percentile('p99.9', 'p999_ms'),
      percentile('max', 'max_ms'),
    ],
    stock: timeline.stock.map((s) => ({ label: s.label, points: zip(s.t, s.remaining) })),
    cpu: Object.entries(timeline.cpu.percent).map(([label, y]) => ({ label, points: zip(timeline.cpu.t, y) })),
  };
}

/** The families of charts whose drawn series differ from the report's JSON (a series may be labelled more than its phase, to tell repeats apart). */
function mismatches(drawn: Drawn): string[] {
  const expected = expectedSeries(drawn.bench.timeline);
  const drawnFamilies: Record<string, Series[]> = {};
  for (const [name, chart] of Object.entries(drawn.charts)) (drawnFamilies[name.split('-')[0]!] ??= []).push(...drawnSeries(chart));
  const same = (a: Series[], b: Series[]) =>
    a.length === b.length && a.every((s, i) => s.label.startsWith(b[i]!.label) && JSON.stringify(s.points) === JSON.stringify(b[i]!.points));
  return [...new Set([...Object.keys(expected), ...Object.keys(drawnFamilies)])].filter((family) => !same(drawnFamilies[family] ?? [], expected[family] ?? []));
}

let browser: Browser;

async function open(file: string): Promise<Drawn> {
  const page = await browser.newPage();
  const requests: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  await page.goto(pathToFileURL(file).href);
  await page.waitForFunction("'charts' in window");
  // Run in the page, as text: this project's types know Node, not the DOM.
  const drawn = (await page.evaluate(`(() => {
    const rows = (selector) => [...document.querySelectorAll(selector + ' tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent));
    const verdict = document.getElementById('invariants-verdict');
    return {
      charts: Object.fromEntries(Object.entries(window.charts).map(([name, u]) => [name, { labels: u.series.slice(1).map((s) => s.label), data: u.data.map((column) => [...column]) }])),
      bench: JSON.parse(document.getElementById('bench').textContent),
      parts: [...document.body.children].filter((e) => e.id && (e.tagName === 'SECTION' || e.tagName === 'DETAILS')).map((e) => e.id),
      rawOpen: document.getElementById('raw')?.open ?? null,
      comparisonRows: [...document.querySelectorAll('#comparison tbody tr')].map((tr) => [tr.dataset.design, ...[...tr.querySelectorAll('td')].map((td) => td.textContent)]),
      comparisonNote: document.getElementById('comparison-note')?.textContent ?? '',
      bars: [...document.querySelectorAll('svg rect.bar')].map((r) => ({
        chart: r.closest('svg').id,
        design: r.dataset.design,
        component: r.dataset.component ?? null,
        kind: r.dataset.kind ?? null,
        value: Number(r.dataset.value),
        width: r.getBBox().width,
        fill: getComputedStyle(r).fill,
      })),
      topFunctions: rows('#top-functions'),
      invariantRows: [...document.querySelectorAll('#invariants tbody tr')].map((tr) => ({ verdict: tr.className, cells: [...tr.querySelectorAll('td')].map((td) => td.textContent) })),
      invariantsVerdict: { className: verdict?.className ?? '', text: verdict?.textContent ?? '' },
      loops: [...document.querySelectorAll('.loop')].map((p) => p.dataset.loop ?? ''),
    };
  })()`)) as Omit<Drawn, 'requests'>;
  await page.close();
  return { ...drawn, requests };
}

/** The bars of one chart, by design, in the order drawn. */
const barsOf = (drawn: Drawn, chart: string) => drawn.bars.filter((b) => b.chart === chart);

/** How far the bars' widths stray from one scale for all their values: 0 when each is drawn in proportion. */
function strayFromScale(bars: Bar[]): number {
  const scale = bars[0]!.width / bars[0]!.value;
  return Math.max(...bars.map((b) => Math.abs(b.width - b.value * scale)));
}

const PHASE_SECONDS = 3;

/** An orders run's phases as the bench labels them, a few seconds apart, each with numbers of its own. */
function ordersTimeline(): TimelineData {
  const designs = ['FOR UPDATE', 'conditional UPDATE + INSERT, one transaction', 'conditional UPDATE + INSERT, autocommit'];
  const races = [
    'Surge 1: POST /items/{id}/orders',
    ...designs.map((d) => `baseline 1: ${d}`),
    ...designs.toReversed().map((d) => `baseline 2: ${d}`),
    'Surge 2: POST /items/{id}/orders',
  ];
  const contended = ['warm-up', '1', '2'].flatMap((run) =>
    ['reservation script, 50 in flight', ...designs.map((d) => `${d}, 50 connections`)].map((what) => `contended ${run}: ${what}`),
  );
  const labels = ['ceiling', ...races, ...contended];
  const phases = labels.map((label, i): PhaseSeries => {
    const t = Array.from({ length: PHASE_SECONDS }, (_, s) => i * (PHASE_SECONDS + 1) + s);
    const at = (base: number) => t.map((_, s) => base * (i + 1) + s);
    return {
      label,
      loop: 'closed',
      generator: 'autocannon, 50 connections',
      t,
      rps: at(100),
      p50_ms: at(1),
      p90_ms: at(2),
      p99_ms: at(3),
      p999_ms: at(4),
      max_ms: at(5),
      summary: { answers: 1000, p50_ms: i + 1, p90_ms: 2 * (i + 1), p99_ms: 3 * (i + 1), p999_ms: 4 * (i + 1), max_ms: 5 * (i + 5) },
    };
  });
  const stock = races.map((label) => {
    const t = phases.find((p) => p.label === label)!.t;
    return { label, t, remaining: t.map((_, s) => 1000 - 400 * s) };
  });
  const seconds = Array.from({ length: labels.length * (PHASE_SECONDS + 1) }, (_, s) => s);
  const cpu = {
    t: seconds,
    percent: Object.fromEntries(
      ['gateway', 'consumers', 'redis', 'database', 'emulator', 'bench', 'machine'].map((name, i) => [name, seconds.map((s) => 10 * i + (s % 7))]),
    ),
  };
  return { started_at: '2026-01-01T00:00:00.000Z', phases, stock, cpu };
}

describe('a bench report', () => {
  let server: Server;
  let report: string;

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    // A real closed-loop load through autocannon, against an answer that takes a varying while.
    server = createServer((_req, res) => setTimeout(() => res.end('ok'), Math.random() * 4));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const timeline = startTimeline({ test: process.pid });
    let stock = 1000;
    const drain = setInterval(() => (stock = Math.max(0, stock - 90)), 100);
    const log = () => undefined;
    await timeline.sampleStock('race', async () => stock, drive({ url, connections: 8, duration: 2 }, 'first', log));
    clearInterval(drain);
    await drive({ url, connections: 4, duration: 2 }, 'second', log);
    const bench = {
      scenario: 'report-test',
      invariants: { final_stock: { expected: 0, actual: 0, ok: true }, rows: { expected: 5, actual: 4, ok: false } },
    };
    report = writeReport(bench, timeline.stop(), mkdtempSync(join(tmpdir(), 'surge-report-')));
  });

  afterAll(async () => {
    await browser?.close();
    server?.close();
  });

  it('draws exactly the numbers of the JSON it embeds, and fetches nothing', async () => {
    // Act
    const drawn = await open(report);

    // Assess
    expect(drawn.requests).toEqual([pathToFileURL(report).href]);
    expect(drawn.bench.timeline.phases.map((p) => p.label)).toEqual(['first', 'second']);
    expect(drawn.bench.timeline.phases.every((p) => p.t.length >= 2)).toBe(true);
    expect(drawn.bench.timeline.stock[0]!.remaining.at(-1)).toBe(0);
    expect(mismatches(drawn)).toEqual([]);
    expect(drawn.comparisonRows).toEqual([]);
    expect(drawn.comparisonNote).toMatch(/no comparison/i);
    expect(drawn.invariantRows).toEqual([
      { verdict: 'ok', cells: ['final_stock', '0', '0', 'held'] },
      { verdict: 'failed', cells: ['rows', '5', '4', '✗ FAILED'] },
    ]);
    expect(drawn.loops).toEqual(['closed']);
  });

  it('is caught when a chart draws a wrong series', async () => {
    // Prepare: the percentiles chart given p50 where p99 belongs
    const html = readFileSync(report, 'utf8');
    const charts = JSON.parse(/<script type="application\/json" id="charts">(.*?)<\/script>/s.exec(html)![1]!);
    const { data } = charts.percentiles;
    [data[1], data[3]] = [data[3], data[1]];
    const wrong = report.replace(/\.html$/, '-wrong.html');
    writeFileSync(
      wrong,
      html.replace(/(<script type="application\/json" id="charts">).*?(<\/script>)/s, (_, open, close) => `${open}${JSON.stringify(charts)}${close}`),
    );

    // Act
    const drawn = await open(wrong);

    // Assess
    expect(mismatches(drawn)).toEqual(['percentiles']);
  });

  describe('of a bench that compares Surge with other designs', () => {
    const bench = JSON.parse(readFileSync(FIXTURE, 'utf8')) as BenchReport & { comparison: Record<string, DesignComparison> };
    const designs = Object.keys(bench.comparison);
    const components = [...PRODUCT_COMPONENTS, ...STAND_IN_COMPONENTS, 'unattributed'] as const;
    const write = (json: BenchReport) => writeReport(json, ordersTimeline(), mkdtempSync(join(tmpdir(), 'surge-report-')));

    it('leads with the comparison, then the invariants, then the timelines a few series to a chart, the JSON last and folded', async () => {
      // Prepare
      const file = write(bench);

      // Act
      const drawn = await open(file);

      // Assess
      expect(drawn.requests).toEqual([pathToFileURL(file).href]);
      expect(drawn.parts).toEqual(['summary', 'checks', 'timelines', 'raw']);
      expect(drawn.rawOpen).toBe(false);

      const cellOf = (value: number | undefined) => (value === undefined ? '—' : String(value));
      expect(drawn.comparisonRows).toEqual(
        designs.map((key) => {
          const d = bench.comparison[key]!;
          return [
            key,
            d.label,
            String(d.rps),
            String(d.p99_ms),
            String(d.ratio),
            ...components.map((c) => cellOf(d.cpu_ms_per_request[c])),
            String(d.product_ms_per_request),
            String(d.stand_in_ms_per_request),
          ];
        }),
      );

      for (const [chart, key] of [
        ['bars-rps', 'rps'],
        ['bars-p99', 'p99_ms'],
      ] as const) {
        const bars = barsOf(drawn, chart);
        expect(
          bars.map((b) => [b.design, b.value]),
          chart,
        ).toEqual(designs.map((d) => [d, bench.comparison[d]![key]]));
        expect(strayFromScale(bars), chart).toBeLessThan(1);
      }
      const cpuBars = barsOf(drawn, 'bars-cpu');
      expect(cpuBars.map((b) => [b.design, b.component, b.value])).toEqual(
        designs.flatMap((d) =>
          components.flatMap((c) => (bench.comparison[d]!.cpu_ms_per_request[c] ? [[d, c, bench.comparison[d]!.cpu_ms_per_request[c]]] : [])),
        ),
      );
      expect(strayFromScale(cpuBars)).toBeLessThan(1);
      const fills = (kind: string) => new Set(cpuBars.filter((b) => b.kind === kind).map((b) => b.fill));
      expect(cpuBars.filter((b) => b.kind === 'product').map((b) => b.component)).toSatisfy((c: string[]) =>
        c.every((name) => (PRODUCT_COMPONENTS as readonly string[]).includes(name)),
      );
      expect(cpuBars.filter((b) => b.kind === 'stand-in').map((b) => b.component)).toSatisfy(
        (c: string[]) => c.length > 0 && c.every((name) => (STAND_IN_COMPONENTS as readonly string[]).includes(name)),
      );
      // Visibly apart: the stand-ins hatched (a pattern), the product's components solid.
      expect([...fills('stand-in')].every((fill) => fill.startsWith('url('))).toBe(true);
      expect([...fills('product')].some((fill) => fill.startsWith('url('))).toBe(false);

      expect(drawn.topFunctions.map((row) => row.slice(0, 2))).toEqual(bench.cpu_profile!.top_functions.map((f) => [f.function, f.where]));

      expect(drawn.invariantRows.map((row) => [row.cells[0], row.verdict])).toEqual([
        ['accepted_1', 'ok'],
        ['rows_after_drain_1', 'failed'],
        ['oversold_for_update', 'ok'],
      ]);
      expect(drawn.invariantsVerdict).toEqual({ className: 'failed', text: expect.stringMatching(/1 of 3 .*FAILED.*rows_after_drain_1/) });

      expect(Object.values(drawn.charts).map((chart) => chart.labels.length)).toSatisfy((counts: number[]) => counts.every((n) => n <= MOST_SERIES_PER_CHART));
      expect(Object.keys(drawn.charts).filter((name) => name.startsWith('throughput-')).length).toBeGreaterThan(1);
      expect(mismatches(drawn)).toEqual([]);
    });

    it('without a "comparison", compares what the JSON has: its req/s and p99, its baselines and its ceiling', async () => {
      // Prepare
      const { comparison: _comparison, cpu_profile: _profile, ...older } = bench;
      const file = write(older);

      // Act
      const drawn = await open(file);

      // Assess
      expect(drawn.comparisonRows).toEqual([
        ['surge', 'Surge', '2400', '180', '1'],
        ['for_update', 'FOR UPDATE', '310', '1900', '7.74'],
        ['conditional_autocommit', 'conditional UPDATE + INSERT, autocommit', '820', '640', '2.93'],
        ['ceiling', 'ceiling', '9100', '—', '0.264'],
      ]);
      expect(drawn.comparisonNote).toMatch(/no "comparison"/);
      expect(barsOf(drawn, 'bars-rps').map((b) => b.design)).toEqual(['surge', 'for_update', 'conditional_autocommit', 'ceiling']);
      expect(barsOf(drawn, 'bars-p99').map((b) => b.design)).toEqual(['surge', 'for_update', 'conditional_autocommit']);
      expect(barsOf(drawn, 'bars-cpu')).toEqual([]);
      expect(drawn.topFunctions).toEqual([]);
      expect(drawn.requests).toEqual([pathToFileURL(file).href]);
    });
  });
});
