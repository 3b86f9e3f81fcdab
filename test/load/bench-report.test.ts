/**
 * A bench report opened as a person opens it, in headless Chromium (Debian's), with nothing but
 * the file: what its charts drew must be the numbers of the JSON it embeds.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drive } from '../../load/support/measure';
import { writeReport } from '../../load/support/report';
import { startTimeline, type TimelineData } from '../../load/support/timeline';

const CHROMIUM = '/usr/bin/chromium';

interface Drawn {
  charts: Record<string, { labels: string[]; data: (number | null)[][] }>;
  bench: { invariants: Record<string, { expected: unknown; actual: unknown; ok: boolean }>; timeline: TimelineData };
  invariantRows: string[][];
  loops: string[];
  requests: string[];
}

type Points = Record<string, [number, number][]>;
const zip = (t: number[], y: number[]) => t.map((x, i): [number, number] => [x, y[i]!]);

/** Each drawn series as its (x, y) points, leaving out where it has none. */
function drawnPoints(chart: { labels: string[]; data: (number | null)[][] }): Points {
  const [xs, ...columns] = chart.data;
  return Object.fromEntries(chart.labels.map((label, i) => [label, xs!.flatMap((x, j) => (columns[i]![j] === null ? [] : [[x!, columns[i]![j]!] as [number, number]]))]));
}

/** What each chart should show, read straight from the timeline in the report's JSON. */
function expectedPoints(timeline: TimelineData): Record<string, Points> {
  const latency = (key: 'p50_ms' | 'p90_ms' | 'p99_ms' | 'p999_ms' | 'max_ms') => timeline.phases.flatMap((p) => zip(p.t, p[key]));
  return {
    throughput: Object.fromEntries(timeline.phases.map((p) => [p.label, zip(p.t, p.rps)])),
    latency: { p50: latency('p50_ms'), p90: latency('p90_ms'), p99: latency('p99_ms'), 'p99.9': latency('p999_ms'), max: latency('max_ms') },
    stock: Object.fromEntries(timeline.stock.map((s) => [s.label, zip(s.t, s.remaining)])),
    cpu: Object.fromEntries(Object.entries(timeline.cpu.percent).map(([name, y]) => [name, zip(timeline.cpu.t, y)])),
  };
}

/** The charts whose drawn points differ from the report's JSON. */
function mismatches(drawn: Drawn): string[] {
  const expected = expectedPoints(drawn.bench.timeline);
  return Object.keys(expected).filter((name) => JSON.stringify(drawnPoints(drawn.charts[name]!)) !== JSON.stringify(expected[name]));
}

let browser: Browser;

async function open(file: string): Promise<Drawn> {
  const page = await browser.newPage();
  const requests: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  await page.goto(pathToFileURL(file).href);
  await page.waitForFunction("'charts' in window");
  // Run in the page, as text: this project's types know Node, not the DOM.
  const drawn = (await page.evaluate(`(() => ({
    charts: Object.fromEntries(Object.entries(window.charts).map(([name, u]) => [name, { labels: u.series.slice(1).map((s) => s.label), data: u.data.map((column) => [...column]) }])),
    bench: JSON.parse(document.getElementById('bench').textContent),
    invariantRows: [...document.querySelectorAll('#invariants tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
    loops: [...document.querySelectorAll('.loop')].map((p) => p.dataset.loop ?? ''),
  }))()`)) as Omit<Drawn, 'requests'>;
  await page.close();
  return { ...drawn, requests };
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

  it("draws exactly the numbers of the JSON it embeds, and fetches nothing", async () => {
    // Act
    const drawn = await open(report);

    // Assess
    expect(drawn.requests).toEqual([pathToFileURL(report).href]);
    expect(Object.keys(drawn.charts).sort()).toEqual(['cpu', 'latency', 'stock', 'throughput']);
    expect(drawn.bench.timeline.phases.map((p) => p.label)).toEqual(['first', 'second']);
    expect(drawn.bench.timeline.phases.every((p) => p.t.length >= 2)).toBe(true);
    expect(drawn.bench.timeline.stock[0]!.remaining.at(-1)).toBe(0);
    expect(mismatches(drawn)).toEqual([]);
    expect(drawn.invariantRows).toEqual([
      ['final_stock', '0', '0', 'held'],
      ['rows', '5', '4', 'FAILED'],
    ]);
    expect(drawn.loops).toEqual(['closed']);
  });

  it('is caught when a chart draws a wrong series', async () => {
    // Prepare: the latency chart given p50 where p99 belongs
    const html = readFileSync(report, 'utf8');
    const charts = JSON.parse(/<script type="application\/json" id="charts">(.*?)<\/script>/s.exec(html)![1]!);
    const { data } = charts.latency;
    [data[1], data[3]] = [data[3], data[1]];
    const wrong = report.replace(/\.html$/, '-wrong.html');
    writeFileSync(wrong, html.replace(/(<script type="application\/json" id="charts">).*?(<\/script>)/s, (_, open, close) => `${open}${JSON.stringify(charts)}${close}`));

    // Act
    const drawn = await open(wrong);

    // Assess
    expect(mismatches(drawn)).toEqual(['latency']);
  });
});
