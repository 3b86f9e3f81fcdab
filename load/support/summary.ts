/**
 * The head of a bench report: Surge against each design it is compared with, as a table and as
 * bars (req/s, p99, CPU per request by component), and where Surge's CPU went by function when the
 * bench profiled it. The bars are inline SVG, drawn here, so the page needs no script for them and
 * fetches nothing.
 */
import { PRODUCT_COMPONENTS, STAND_IN_COMPONENTS, type CpuComponent, type CpuProfile, type DesignComparison } from './cpu-components';
import { cell, escapeHtml } from './html';
import { round } from './round';

/** What of a bench's JSON the summary reads. */
export interface ComparedReport {
  comparison?: Record<string, Partial<DesignComparison>>;
  cpu_profile?: CpuProfile;
  [key: string]: unknown;
}

type Design = Partial<DesignComparison> & { label: string };
type Kind = 'product' | 'stand-in' | 'unattributed';

const COMPONENTS: readonly { name: CpuComponent; kind: Kind; colour: string }[] = [
  ...PRODUCT_COMPONENTS.map((name, i) => ({ name, kind: 'product' as const, colour: ['#1f5fa8', '#c4382c', '#2e8b57'][i]! })),
  ...STAND_IN_COMPONENTS.map((name, i) => ({ name, kind: 'stand-in' as const, colour: ['#e08a1e', '#8e5bb8', '#8c6d31'][i]! })),
  { name: 'unattributed', kind: 'unattributed', colour: '#bbbbbb' },
];

const number = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);
const object = (value: unknown) => (value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined);
const shown = (value: number | undefined) => (value === undefined ? '—' : String(value));

/**
 * Surge and the designs as the benches wrote them before their JSON had a "comparison": Surge's
 * own req/s and p99, its baselines (or its one baseline) and the gateway's ceiling.
 */
function piecedTogether(report: ComparedReport): Record<string, Design> {
  const rps = number(report.rps);
  if (rps === undefined) return {};
  const designs: Record<string, Design> = { surge: { label: 'Surge', rps, p99_ms: number(report.p99_ms), ratio: 1 } };
  const baselines = object(report.baselines) ?? (object(report.baseline) ? { baseline: report.baseline } : {});
  for (const [key, value] of Object.entries(baselines)) {
    const baseline = object(value);
    if (!baseline) continue;
    const label = [baseline.design, baseline.name].find((name) => typeof name === 'string') as string | undefined;
    const baselineRps = number(baseline.rps);
    const ratio = number(baseline.ratio) ?? (baselineRps ? round(rps / baselineRps, 2) : undefined);
    designs[key] = { label: label ?? key, rps: baselineRps, p99_ms: number(baseline.p99_ms), ratio };
  }
  const ceiling = number(report.ceiling_rps);
  if (ceiling !== undefined) designs.ceiling = { label: 'ceiling', rps: ceiling, ratio: number(report.ratio_to_ceiling) };
  return designs;
}

function designsOf(report: ComparedReport): { designs: Record<string, Design>; note?: string } {
  if (report.comparison) {
    const designs = Object.fromEntries(Object.entries(report.comparison).map(([key, d]) => [key, { ...d, label: d.label ?? key }]));
    return { designs };
  }
  const designs = piecedTogether(report);
  if (Object.keys(designs).length === 0) return { designs, note: "This bench's JSON has no comparison, nor a req/s of its own to compare." };
  return {
    designs,
    note: 'This bench\'s JSON has no "comparison": the table is pieced together from its rps, p99_ms, baselines and ceiling_rps, and it has no CPU per request by component.',
  };
}

const cpuOf = (design: Design, component: CpuComponent) => number(design.cpu_ms_per_request?.[component]);
/** A kind's components added up, where the design has CPU by component at all. */
const sumOf = (design: Design, kind: Kind) =>
  design.cpu_ms_per_request
    ? round(
        COMPONENTS.filter((c) => c.kind === kind).reduce((sum, c) => sum + (cpuOf(design, c.name) ?? 0), 0),
        4,
      )
    : undefined;
const productMs = (design: Design) => number(design.product_ms_per_request) ?? sumOf(design, 'product');
const standInMs = (design: Design) => number(design.stand_in_ms_per_request) ?? sumOf(design, 'stand-in');

function comparisonTable(designs: Record<string, Design>): string {
  const all = Object.values(designs);
  const components = COMPONENTS.filter((c) => all.some((d) => cpuOf(d, c.name) !== undefined));
  const totals = all.some((d) => d.cpu_ms_per_request || d.product_ms_per_request !== undefined || d.stand_in_ms_per_request !== undefined);
  const heads = (kind: Kind, title: string) => {
    const columns = components.filter((c) => c.kind === kind).length;
    return columns ? `<th colspan="${columns}" class="${kind}">${title}</th>` : '';
  };
  const cpuHead = `${heads('product', 'CPU ms per request: product')}${heads('stand-in', 'stand-ins for AWS')}${heads('unattributed', '')}${totals ? '<th colspan="2">CPU ms per request, totals</th>' : ''}`;
  const secondHead =
    components.map((c) => `<th class="${c.kind}">${c.name}</th>`).join('') +
    (totals ? '<th class="product">product</th><th class="stand-in">stand-ins</th>' : '');
  const rows = Object.entries(designs).map(([key, d]) => {
    const cells = [d.label, shown(number(d.rps)), shown(number(d.p99_ms)), shown(number(d.ratio)), ...components.map((c) => shown(cpuOf(d, c.name)))];
    if (totals) cells.push(shown(productMs(d)), shown(standInMs(d)));
    return `<tr data-design="${escapeHtml(key)}"${key === 'surge' ? ' class="surge"' : ''}>${cells.map(cell).join('')}</tr>`;
  });
  return `<table id="comparison"><thead>
<tr><th rowspan="2">design</th><th rowspan="2">req/s</th><th rowspan="2">p99 ms</th><th rowspan="2">Surge's req/s ÷ this design's</th>${cpuHead}</tr>
<tr>${secondHead}</tr></thead>
<tbody>${rows.join('\n')}</tbody></table>`;
}

export interface Segment {
  value: number;
  fill: string;
  component?: CpuComponent;
  kind?: Kind;
}

export interface BarRow {
  key: string;
  label: string;
  segments: Segment[];
  note: string;
}

const LABEL_WIDTH = 330;
const BAR_AREA = 420;
const NOTE_WIDTH = 330;
const ROW_HEIGHT = 26;
const BAR_HEIGHT = 16;
const TITLE_HEIGHT = 26;
const LEGEND_HEIGHT = 22;
/** Between a design's product and stand-in segments, so the two read as two parts of its bar. */
const KIND_GAP = 4;
const LONGEST_LABEL = 46;
const SURGE_FILL = '#1f5fa8';
const OTHER_FILL = '#8fa9c4';

/** What a chart draws besides its bars: patterns its bars fill with, and a legend under them. */
interface Decoration {
  defs: string;
  legend(y: number): string;
}

/** Horizontal bars, one row per design, on one scale: segments of a row stack left to right. */
export function barChart(id: string, title: string, rows: BarRow[], decoration?: Decoration): string {
  const longest = Math.max(...rows.map((r) => r.segments.reduce((sum, s) => sum + s.value, 0)));
  const gaps = Math.max(...rows.map((r) => new Set(r.segments.map((s) => s.kind)).size - 1), 0);
  const scale = longest > 0 ? (BAR_AREA - gaps * KIND_GAP) / longest : 0;
  const body = rows.map((row, i) => {
    const y = TITLE_HEIGHT + i * ROW_HEIGHT;
    const label = row.label.length > LONGEST_LABEL ? `${row.label.slice(0, LONGEST_LABEL - 1)}…` : row.label;
    let x = LABEL_WIDTH;
    const bars = row.segments.map((s, j) => {
      if (j > 0 && s.kind !== row.segments[j - 1]!.kind) x += KIND_GAP;
      const width = round(s.value * scale, 2);
      const component = s.component ? ` data-component="${s.component}" data-kind="${s.kind}"` : '';
      const rect = `<rect class="bar" x="${round(x, 2)}" y="${y + (ROW_HEIGHT - BAR_HEIGHT) / 2}" width="${width}" height="${BAR_HEIGHT}" fill="${s.fill}" data-design="${escapeHtml(row.key)}" data-value="${s.value}"${component}><title>${escapeHtml(`${row.label}${s.component ? `, ${s.component}` : ''}: ${s.value}`)}</title></rect>`;
      x += width;
      return rect;
    });
    return `<text x="${LABEL_WIDTH - 8}" y="${y + ROW_HEIGHT / 2}" text-anchor="end" dominant-baseline="middle"${row.key === 'surge' ? ' font-weight="bold"' : ''}><title>${escapeHtml(row.label)}</title>${escapeHtml(label)}</text>
${bars.join('\n')}
<text x="${round(x + 6, 2)}" y="${y + ROW_HEIGHT / 2}" dominant-baseline="middle" class="note">${escapeHtml(row.note)}</text>`;
  });
  const barsEnd = TITLE_HEIGHT + rows.length * ROW_HEIGHT;
  const height = barsEnd + (decoration ? LEGEND_HEIGHT : 0) + 6;
  return `<svg id="${id}" class="bars" xmlns="http://www.w3.org/2000/svg" width="${LABEL_WIDTH + BAR_AREA + NOTE_WIDTH}" height="${height}" role="img" aria-label="${escapeHtml(title)}">
<defs>${decoration?.defs ?? ''}</defs>
<text x="0" y="16" font-weight="bold">${escapeHtml(title)}</text>
${body.join('\n')}
${decoration?.legend(barsEnd + 8) ?? ''}
</svg>`;
}

/** Stand-ins are hatched in their colour, the product's components solid: the two kinds tell apart at a glance, in any colours. */
const hatch = (component: CpuComponent, colour: string) =>
  `<pattern id="hatch-${component}" patternUnits="userSpaceOnUse" width="6" height="6" patternTransform="rotate(45)"><rect width="6" height="6" fill="#ffffff"/><rect width="3" height="6" fill="${colour}"/></pattern>`;
const LEGEND_HEADINGS: Record<Kind, string> = { product: 'product:', 'stand-in': 'stand-ins for AWS:', unattributed: '' };
/** About how wide a character of the legend is, to place the next entry after it. */
const CHAR_WIDTH = 7;
const fillOf = (c: (typeof COMPONENTS)[number]) => (c.kind === 'stand-in' ? `url(#hatch-${c.name})` : c.colour);

function cpuChart(designs: Record<string, Design>): string {
  const rows = Object.entries(designs).flatMap(([key, d]): BarRow[] => {
    const segments = COMPONENTS.flatMap((c): Segment[] => {
      const value = cpuOf(d, c.name);
      // A share at or below zero has no bar to draw; the table shows it.
      return value && value > 0 ? [{ value, fill: fillOf(c), component: c.name, kind: c.kind }] : [];
    });
    if (segments.length === 0) return [];
    const unattributed = cpuOf(d, 'unattributed');
    return [
      {
        key,
        label: d.label,
        segments,
        note: `${shown(productMs(d))} product + ${shown(standInMs(d))} stand-ins${unattributed ? ` + ${unattributed} unattributed` : ''}`,
      },
    ];
  });
  if (rows.length === 0) return '';
  const present = COMPONENTS.filter((c) => rows.some((r) => r.segments.some((s) => s.component === c.name)));
  const legend = (y: number) => {
    let x = 0;
    return (['product', 'stand-in', 'unattributed'] as const)
      .flatMap((kind) => {
        const members = present.filter((c) => c.kind === kind);
        if (members.length === 0) return [];
        const heading = LEGEND_HEADINGS[kind];
        const parts = heading ? [`<text x="${x}" y="${y}" dy="11" font-weight="bold">${heading}</text>`] : [];
        x += heading ? heading.length * CHAR_WIDTH + 6 : 0;
        for (const c of members) {
          parts.push(
            `<rect x="${x}" y="${y}" width="14" height="14" fill="${fillOf(c)}" stroke="#555" stroke-width="0.5"/><text x="${x + 18}" y="${y}" dy="11">${c.name}</text>`,
          );
          x += 18 + c.name.length * CHAR_WIDTH + 14;
        }
        x += 16;
        return parts;
      })
      .join('\n');
  };
  const defs = present
    .filter((c) => c.kind === 'stand-in')
    .map((c) => hatch(c.name, c.colour))
    .join('');
  return `<p class="explain">CPU per request is split into Surge's product (its functions and the stores they use) and the twin's stand-ins for AWS, whose work AWS does in a deployment.</p>
${barChart('bars-cpu', 'CPU ms per request, by component (product solid, stand-ins hatched)', rows, { defs, legend })}`;
}

function simpleChart(
  id: string,
  title: string,
  designs: Record<string, Design>,
  valueOf: (d: Design) => number | undefined,
  note: (key: string, d: Design, value: number) => string,
): string {
  const rows = Object.entries(designs).flatMap(([key, d]): BarRow[] => {
    const value = valueOf(d);
    return value === undefined
      ? []
      : [{ key, label: d.label, segments: [{ value, fill: key === 'surge' ? SURGE_FILL : OTHER_FILL }], note: note(key, d, value) }];
  });
  return rows.length ? barChart(id, title, rows) : '';
}

function topFunctions(profile: CpuProfile | undefined): string {
  if (!profile?.top_functions?.length) return '';
  const rows = profile.top_functions.map((f) => `<tr>${[f.function, f.where, f.self_ms_per_request, `${round(f.share * 100, 1)}%`].map(cell).join('')}</tr>`);
  return `<h3>Where Surge's CPU went, by function</h3>
<p>${escapeHtml(profile.method)}</p>
<table id="top-functions"><thead><tr><th>function</th><th>where</th><th>self ms per request</th><th>share</th></tr></thead>
<tbody>${rows.join('\n')}</tbody></table>`;
}

export function summarySection(report: ComparedReport): string {
  const { designs, note } = designsOf(report);
  const rps = simpleChart(
    'bars-rps',
    'Requests per second (higher is better)',
    designs,
    (d) => number(d.rps),
    (key, d, value) => (key === 'surge' || number(d.ratio) === undefined ? `${value} req/s` : `${value} req/s (Surge: ${d.ratio}×)`),
  );
  const p99 = simpleChart(
    'bars-p99',
    'p99 latency, ms (lower is better)',
    designs,
    (d) => number(d.p99_ms),
    (_key, _d, value) => `${value} ms`,
  );
  return `<section id="summary">
<h2>Surge against the designs it is compared with</h2>
${note ? `<p id="comparison-note" class="note">${escapeHtml(note)}</p>` : ''}
${Object.keys(designs).length ? comparisonTable(designs) : ''}
${rps}
${p99}
${cpuChart(designs)}
${topFunctions(report.cpu_profile)}
</section>`;
}
