/**
 * A bench run's HTML report, one self-contained file: the bench's JSON and its timeline embedded
 * (`<script type="application/json" id="bench">`), charts drawn by uPlot, whose script and styles
 * are read from node_modules and inlined, so opening the file fetches nothing.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Loop, TimelineData } from './timeline';

export const REPORTS_DIR = 'load/reports';

/** One chart's data as uPlot takes it: the x values, then one array per series, aligned (null where a series has no point). */
export interface ChartData {
  title: string;
  yLabel: string;
  series: string[];
  data: [number[], ...(number | null)[][]];
}

export interface BenchReport {
  scenario: string;
  invariants?: Record<string, { expected: unknown; actual: unknown; ok?: boolean }>;
  [key: string]: unknown;
}

/** Series sampled at their own times, put on one x axis. */
function aligned(title: string, yLabel: string, series: { label: string; t: number[]; y: number[] }[]): ChartData {
  const xs = [...new Set(series.flatMap((s) => s.t))].sort((a, b) => a - b);
  const index = new Map(xs.map((x, i) => [x, i]));
  const columns = series.map((s) => {
    const column: (number | null)[] = xs.map(() => null);
    s.t.forEach((t, i) => (column[index.get(t)!] = s.y[i]!));
    return column;
  });
  return { title, yLabel, series: series.map((s) => s.label), data: [xs, ...columns] };
}

const LATENCY_SERIES = [
  ['p50', 'p50_ms'],
  ['p90', 'p90_ms'],
  ['p99', 'p99_ms'],
  ['p99.9', 'p999_ms'],
  ['max', 'max_ms'],
] as const;

export function chartsOf(timeline: TimelineData): Record<'throughput' | 'latency' | 'stock' | 'cpu', ChartData> {
  const phases = timeline.phases;
  return {
    throughput: aligned('Answers per second, by phase', 'answers/s', phases.map((p) => ({ label: p.label, t: p.t, y: p.rps }))),
    latency: aligned(
      'Latency percentiles per second (all phases)',
      'ms',
      LATENCY_SERIES.map(([label, key]) => ({ label, t: phases.flatMap((p) => p.t), y: phases.flatMap((p) => p[key]) })),
    ),
    stock: aligned('Remaining stock during the races', 'units left', timeline.stock.map((s) => ({ label: s.label, t: s.t, y: s.remaining }))),
    cpu: aligned('CPU per component', '% of one core', Object.entries(timeline.cpu.percent).map(([label, y]) => ({ label, t: timeline.cpu.t, y }))),
  };
}

const require = createRequire(import.meta.url);
const uplotFile = (name: string) => readFileSync(join(require.resolve('uplot/package.json'), '..', 'dist', name), 'utf8');

/** JSON that may sit inside a <script> element: no "</script>" or "<!--" can appear in it. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');
const escapeHtml = (text: string) => text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
const cell = (value: unknown) => `<td>${escapeHtml(typeof value === 'string' ? value : JSON.stringify(value))}</td>`;

const LOOP_NOTE: Record<Loop, string> = {
  closed:
    'closed loop: each connection sends its next request only once the answer to its last has come. When the server slows down, so does the load, and the requests that would have waited in a queue are never sent, so these percentiles understate what users arriving at a steady rate would see (coordinated omission). An open-loop generator, such as Artillery with its arrival rates, keeps sending and shows the queueing delay.',
  open: 'open loop: requests arrive at a set rate whatever the answers, so queueing delay shows in the latencies.',
};

function loadSection(timeline: TimelineData): string {
  const loops = [...new Set(timeline.phases.map((p) => p.loop))];
  const notes = loops.map((loop) => `<p class="loop" data-loop="${loop}"><strong>Load generation:</strong> ${escapeHtml(LOOP_NOTE[loop])}</p>`).join('\n');
  const rows = timeline.phases
    .map((p) => `<tr>${[p.label, p.loop, p.generator, p.summary.answers, p.summary.p50_ms, p.summary.p90_ms, p.summary.p99_ms, p.summary.p999_ms, p.summary.max_ms].map(cell).join('')}</tr>`)
    .join('\n');
  return `${notes || '<p class="loop">No HTTP load phases were recorded.</p>'}
<table id="phases"><thead><tr><th>phase</th><th>loop</th><th>generator</th><th>answers</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>p99.9 ms</th><th>max ms</th></tr></thead>
<tbody>${rows}</tbody></table>`;
}

function invariantsSection(report: BenchReport): string {
  const rows = Object.entries(report.invariants ?? {})
    .map(([name, v]) => `<tr class="${v.ok ? 'ok' : 'failed'}">${[name, v.expected, v.actual, v.ok ? 'held' : 'FAILED'].map(cell).join('')}</tr>`)
    .join('\n');
  return `<table id="invariants"><thead><tr><th>invariant</th><th>expected</th><th>actual</th><th></th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** The page's own script: draws each chart of #charts and keeps the instances on window.charts. */
const DRAW = `
const charts = JSON.parse(document.getElementById('charts').textContent);
const palette = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
window.charts = {};
for (const [name, chart] of Object.entries(charts)) {
  const el = document.getElementById('chart-' + name);
  if (chart.data[0].length === 0) { el.textContent = 'Nothing recorded.'; continue; }
  window.charts[name] = new uPlot({
    title: chart.title,
    width: Math.min(1100, document.body.clientWidth - 40),
    height: 320,
    scales: { x: { time: false } },
    axes: [{ label: 'seconds since the run started' }, { label: chart.yLabel, size: 70 }],
    series: [{ label: 's' }, ...chart.series.map((label, i) => ({ label, stroke: palette[i % palette.length], width: 1.5, points: { show: chart.data[0].length < 60 } }))],
  }, chart.data, el);
}
`;

export function renderReport(report: BenchReport, timeline: TimelineData): string {
  const charts = chartsOf(timeline);
  const title = `Surge bench: ${report.scenario}, ${timeline.started_at}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>${uplotFile('uPlot.min.css')}
body { font: 14px/1.4 system-ui, sans-serif; margin: 20px; color: #222; }
table { border-collapse: collapse; margin: 10px 0 20px; } td, th { border: 1px solid #ccc; padding: 3px 8px; text-align: left; }
tr.failed td { background: #fdd; } tr.ok td:last-child { color: #080; } .loop { max-width: 1100px; }
pre { background: #f6f6f6; padding: 10px; overflow: auto; max-height: 400px; }</style>
</head><body>
<h1>${escapeHtml(title)}</h1>
<h2>Load</h2>
${loadSection(timeline)}
<h2>Throughput</h2><div id="chart-throughput"></div>
<h2>Latency</h2><p>From HdrHistogram (3 significant digits), every answer's own latency, per second of each phase.</p><div id="chart-latency"></div>
<h2>Remaining stock</h2><div id="chart-stock"></div>
<h2>CPU</h2><div id="chart-cpu"></div>
<h2>Invariants</h2>
${invariantsSection(report)}
<h2>The bench's JSON</h2><pre>${escapeHtml(JSON.stringify(report, null, 2))}</pre>
<script type="application/json" id="bench">${scriptJson({ ...report, timeline })}</script>
<script type="application/json" id="charts">${scriptJson(charts)}</script>
<script>${uplotFile('uPlot.iife.min.js')}</script>
<script>${DRAW}</script>
</body></html>
`;
}

/** Writes the report to load/reports/<scenario>-<time>.html; returns its path. */
export function writeReport(report: BenchReport, timeline: TimelineData, dir = REPORTS_DIR): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${report.scenario}-${timeline.started_at.replace(/[:.]/g, '-')}.html`);
  writeFileSync(path, renderReport(report, timeline));
  return path;
}
