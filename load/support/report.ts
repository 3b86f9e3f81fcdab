/**
 * A bench run's HTML report, one self-contained file. It leads with Surge against the designs it
 * is compared with (./summary), then the invariants, then the timelines, a few series to a chart,
 * and ends with the bench's JSON, its timeline embedded (`<script type="application/json"
 * id="bench">`). Timelines are drawn by uPlot, whose script and styles are read from node_modules
 * and inlined, so opening the file fetches nothing.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { cell, escapeHtml, scriptJson } from './html';
import { summarySection, type ComparedReport } from './summary';
import type { Loop, TimelineData } from './timeline';

export const REPORTS_DIR = 'load/reports';

/** One chart's data as uPlot takes it: the x values, then one array per series, aligned (null where a series has no point). */
export interface ChartData {
  title: string;
  yLabel: string;
  series: string[];
  data: [number[], ...(number | null)[][]];
}

export interface BenchReport extends ComparedReport {
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

/**
 * Phases on one chart: one round of a comparison (Surge and three baselines, or a contended run
 * of the script and three designs) fits, and the lines can still be told apart.
 */
const PHASES_PER_CHART = 4;
/** The processes of a run (the twin's five and the bench) on one chart: more and its lines cannot be told apart. */
const PROCESSES_PER_CHART = 6;

/** What a phase belongs to, by its label: the part before ':' ("Surge 1", "baseline 1", "contended 2"), or the whole label. */
const groupOf = (label: string) => label.split(':')[0]!.trim();

/**
 * Labelled items (phases, races) cut into charts in the order they ran: consecutive items of one
 * group stay together, and consecutive groups share a chart while it holds at most `most`; a group
 * larger than that fills charts of its own.
 */
function chartGroups<T extends { label: string }>(items: T[], most: number): T[][] {
  const groups: T[][] = [];
  for (const item of items) {
    const last = groups.at(-1);
    if (last && groupOf(last[0]!.label) === groupOf(item.label)) last.push(item);
    else groups.push([item]);
  }
  const charts: T[][] = [];
  for (const group of groups) {
    const last = charts.at(-1);
    if (last && last.length + group.length <= most) last.push(...group);
    else for (let i = 0; i < group.length; i += most) charts.push(group.slice(i, i + most));
  }
  return charts;
}

/** The chart's groups, for its heading: "ceiling · Surge 1". */
const titleOf = (items: { label: string }[]) => [...new Set(items.map((i) => groupOf(i.label)))].join(' · ');

/** Labels as they go in one chart's legend: a label that comes again (the ceiling's second turn) is numbered. */
function legendLabels(labels: string[]): string[] {
  const seen = new Map<string, number>();
  return labels.map((label) => {
    const n = (seen.get(label) ?? 0) + 1;
    seen.set(label, n);
    return n === 1 ? label : `${label} (${n})`;
  });
}

/** A chart of several labelled series, each labelled for the legend. */
function chartOf(title: string, yLabel: string, series: { label: string; t: number[]; y: number[] }[]): ChartData {
  const labels = legendLabels(series.map((s) => s.label));
  return aligned(
    title,
    yLabel,
    series.map((s, i) => ({ ...s, label: labels[i]! })),
  );
}

/** One timeline chart, named for its element (chart-<name>) and for window.charts. */
export interface NamedChart {
  name: string;
  chart: ChartData;
}

/** The timeline's charts, by part of the page. */
export interface TimelineCharts {
  /** Per group of phases: answers per second, and each phase's p99 per second. */
  phases: { title: string; throughput: NamedChart; p99: NamedChart }[];
  percentiles: NamedChart;
  stock: NamedChart[];
  cpu: NamedChart[];
}

export function chartsOf(timeline: TimelineData): TimelineCharts {
  const phases = timeline.phases;
  const processes = Object.entries(timeline.cpu.percent).filter(([name]) => name !== 'machine');
  const cpu = (title: string, series: [string, number[]][]) =>
    chartOf(
      title,
      '% of one core',
      series.map(([label, y]) => ({ label, t: timeline.cpu.t, y })),
    );
  return {
    phases: chartGroups(phases, PHASES_PER_CHART).map((group, i) => {
      const title = titleOf(group);
      return {
        title,
        throughput: {
          name: `throughput-${i + 1}`,
          chart: chartOf(
            `Answers per second: ${title}`,
            'answers/s',
            group.map((p) => ({ label: p.label, t: p.t, y: p.rps })),
          ),
        },
        p99: {
          name: `p99-${i + 1}`,
          chart: chartOf(
            `p99 latency per second: ${title}`,
            'ms',
            group.map((p) => ({ label: p.label, t: p.t, y: p.p99_ms })),
          ),
        },
      };
    }),
    percentiles: {
      name: 'percentiles',
      chart: aligned(
        'Latency percentiles per second (all phases)',
        'ms',
        LATENCY_SERIES.map(([label, key]) => ({ label, t: phases.flatMap((p) => p.t), y: phases.flatMap((p) => p[key]) })),
      ),
    },
    stock: chartGroups(timeline.stock, PHASES_PER_CHART).map((group, i) => ({
      name: `stock-${i + 1}`,
      chart: chartOf(
        `Remaining stock: ${titleOf(group)}`,
        'units left',
        group.map((s) => ({ label: s.label, t: s.t, y: s.remaining })),
      ),
    })),
    cpu: [
      ...chartGroups(
        processes.map(([label, y]) => ({ label, y })),
        PROCESSES_PER_CHART,
      ).map((group, i) => ({
        name: `cpu-processes-${i + 1}`,
        chart: cpu(
          'CPU per process',
          group.map((p): [string, number[]] => [p.label, p.y]),
        ),
      })),
      ...(timeline.cpu.percent.machine
        ? [{ name: 'cpu-machine', chart: cpu('CPU of the whole machine, all cores together', [['machine', timeline.cpu.percent.machine]]) }]
        : []),
    ],
  };
}

const require = createRequire(import.meta.url);
const uplotFile = (name: string) => readFileSync(join(require.resolve('uplot/package.json'), '..', 'dist', name), 'utf8');

const LOOP_NOTE: Record<Loop, string> = {
  closed:
    'closed loop: each connection sends its next request only once the answer to its last has come. When the server slows down, so does the load, and the requests that would have waited in a queue are never sent, so these percentiles understate what users arriving at a steady rate would see (coordinated omission). An open-loop generator, such as Artillery with its arrival rates, keeps sending and shows the queueing delay.',
  open: 'open loop: requests arrive at a set rate whatever the answers, so queueing delay shows in the latencies.',
};

function loopNotes(timeline: TimelineData): string {
  const loops = [...new Set(timeline.phases.map((p) => p.loop))];
  const notes = loops.map((loop) => `<p class="loop" data-loop="${loop}"><strong>Load generation:</strong> ${escapeHtml(LOOP_NOTE[loop])}</p>`).join('\n');
  return notes || '<p class="loop">No HTTP load phases were recorded.</p>';
}

function phasesTable(timeline: TimelineData): string {
  const rows = timeline.phases
    .map(
      (p) =>
        `<tr>${[p.label, p.loop, p.generator, p.summary.answers, p.summary.p50_ms, p.summary.p90_ms, p.summary.p99_ms, p.summary.p999_ms, p.summary.max_ms].map(cell).join('')}</tr>`,
    )
    .join('\n');
  return `<table id="phases"><thead><tr><th>phase</th><th>loop</th><th>generator</th><th>answers</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>p99.9 ms</th><th>max ms</th></tr></thead>
<tbody>${rows}</tbody></table>`;
}

function invariantsSection(report: BenchReport): string {
  const invariants = Object.entries(report.invariants ?? {});
  const failed = invariants.filter(([, v]) => !v.ok).map(([name]) => name);
  const verdict = !invariants.length
    ? '<p id="invariants-verdict">This bench checks no invariants.</p>'
    : failed.length
      ? `<p id="invariants-verdict" class="failed">✗ ${failed.length} of ${invariants.length} invariants FAILED: ${escapeHtml(failed.join(', '))}</p>`
      : `<p id="invariants-verdict" class="ok">✓ all ${invariants.length} invariants held</p>`;
  const rows = invariants
    .map(([name, v]) => `<tr class="${v.ok ? 'ok' : 'failed'}">${[name, v.expected, v.actual, v.ok ? 'held' : '✗ FAILED'].map(cell).join('')}</tr>`)
    .join('\n');
  return `${verdict}
<table id="invariants"><thead><tr><th>invariant</th><th>expected</th><th>actual</th><th></th></tr></thead><tbody>${rows}</tbody></table>`;
}

const chartDiv = ({ name }: NamedChart) => `<div id="chart-${name}" class="chart"></div>`;

function timelinesSection(timeline: TimelineData, charts: TimelineCharts): string {
  const phases = charts.phases.map((group) => `<h3>${escapeHtml(group.title)}</h3>\n${chartDiv(group.throughput)}${chartDiv(group.p99)}`).join('\n');
  return `<section id="timelines">
<h2>Timelines</h2>
${loopNotes(timeline)}
<p>Answers per second and each phase's p99 latency per second, a few phases to a chart, grouped by the part of their label before ':' in the order they ran. Latencies are from HdrHistogram (3 significant digits), every answer's own latency.</p>
${phases}
<h3>Latency percentiles per second, all phases</h3>${chartDiv(charts.percentiles)}
<h3>Remaining stock during the races</h3>${charts.stock.map(chartDiv).join('\n') || '<p>No race was sampled.</p>'}
<h3>CPU</h3>${charts.cpu.map(chartDiv).join('\n')}
<h3>Every phase, over its whole length</h3>
${phasesTable(timeline)}
</section>`;
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
    height: 260,
    scales: { x: { time: false } },
    axes: [{ label: 'seconds since the run started' }, { label: chart.yLabel, size: 70 }],
    series: [{ label: 's' }, ...chart.series.map((label, i) => ({ label, stroke: palette[i % palette.length], width: 1.5, points: { show: chart.data[0].length < 60 } }))],
  }, chart.data, el);
}
`;

export function renderReport(report: BenchReport, timeline: TimelineData): string {
  const charts = chartsOf(timeline);
  const named = [...charts.phases.flatMap((group) => [group.throughput, group.p99]), charts.percentiles, ...charts.stock, ...charts.cpu];
  const title = `Surge bench: ${report.scenario}, ${timeline.started_at}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>${uplotFile('uPlot.min.css')}
body { font: 14px/1.4 system-ui, sans-serif; margin: 20px; color: #222; }
table { border-collapse: collapse; margin: 10px 0 20px; } td, th { border: 1px solid #ccc; padding: 3px 8px; text-align: left; }
tr.failed td { background: #fdd; } tr.failed td:last-child { color: #b00; font-weight: bold; } tr.ok td:last-child { color: #080; }
p.failed { color: #b00; font-weight: bold; } p.ok { color: #080; } .loop, .explain, .note { max-width: 1100px; }
tr.surge td { font-weight: bold; } th.product { background: #e6eef8; } th.stand-in { background: #fbeedd; }
svg.bars { display: block; margin: 10px 0 20px; font-size: 12px; } svg.bars text.note { fill: #444; }
.chart { margin-bottom: 12px; }
pre { background: #f6f6f6; padding: 10px; overflow: auto; max-height: 400px; }</style>
</head><body>
<h1>${escapeHtml(title)}</h1>
${summarySection(report)}
<section id="checks">
<h2>Invariants</h2>
${invariantsSection(report)}
</section>
${timelinesSection(timeline, charts)}
<details id="raw"><summary>The bench's JSON</summary><pre>${escapeHtml(JSON.stringify(report, null, 2))}</pre></details>
<script type="application/json" id="bench">${scriptJson({ ...report, timeline })}</script>
<script type="application/json" id="charts">${scriptJson(Object.fromEntries(named.map(({ name, chart }) => [name, chart])))}</script>
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
