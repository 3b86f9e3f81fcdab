import type { Readable } from 'node:stream';

/** What CloudWatch would make of the EMF lines seen so far: one row per namespace, metric and dimension values. */
export interface MetricSum {
  namespace: string;
  name: string;
  unit: string;
  dimensions: Record<string, string>;
  /** Values recorded (a count of 3 recorded once is one value). */
  samples: number;
  sum: number;
  min: number;
  max: number;
}

export interface MetricsSnapshot {
  metrics: MetricSum[];
  /** The latest EMF lines as printed, newest last. */
  recent: unknown[];
}

interface EmfLine {
  _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit?: string }[] }[] };
  [field: string]: unknown;
}

const RECENT_LINES = 100;
/** Powertools prints `_aws` first; anything else is a log line, not worth parsing. */
const EMF_START = '{"_aws":';

function isEmf(value: unknown): value is EmfLine {
  const directives = (value as EmfLine | undefined)?._aws?.CloudWatchMetrics;
  return Array.isArray(directives);
}

/**
 * The twin's stand-in for CloudWatch's EMF extraction: reads the lines its functions print (in this
 * process, in the consumers' process, in bundle mode's worker threads) and sums each metric per
 * set of dimension values, as CloudWatch would before any statistic is asked for.
 */
export class EmfCollector {
  private readonly sums = new Map<string, MetricSum>();
  private readonly recent: unknown[] = [];

  /** Takes one printed line; a line that is not EMF is ignored. */
  take(line: string): void {
    if (!line.startsWith(EMF_START)) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      return;
    }
    if (!isEmf(parsed)) return;
    this.recent.push(parsed);
    if (this.recent.length > RECENT_LINES) this.recent.shift();
    for (const directive of parsed._aws.CloudWatchMetrics) {
      for (const dimensionSet of directive.Dimensions) {
        const dimensions = Object.fromEntries(dimensionSet.map((name) => [name, String(parsed[name])]));
        for (const metric of directive.Metrics) this.add(directive.Namespace, metric.Name, metric.Unit ?? 'None', dimensions, parsed[metric.Name]);
      }
    }
  }

  private add(namespace: string, name: string, unit: string, dimensions: Record<string, string>, raw: unknown): void {
    const values = (Array.isArray(raw) ? raw : [raw]).map(Number).filter(Number.isFinite);
    if (values.length === 0) return;
    const key = JSON.stringify([namespace, name, Object.entries(dimensions).sort()]);
    let sum = this.sums.get(key);
    if (!sum) this.sums.set(key, (sum = { namespace, name, unit, dimensions, samples: 0, sum: 0, min: Infinity, max: -Infinity }));
    for (const value of values) {
      sum.samples += 1;
      sum.sum += value;
      sum.min = Math.min(sum.min, value);
      sum.max = Math.max(sum.max, value);
    }
  }

  snapshot(): MetricsSnapshot {
    const metrics = [...this.sums.values()].sort((a, b) => a.name.localeCompare(b.name));
    return { metrics, recent: [...this.recent] };
  }
}

/** Calls onLine with each whole line the stream carries. */
export function eachLine(stream: Readable, onLine: (line: string) => void): void {
  let rest = '';
  stream.on('data', (chunk: Buffer | string) => {
    const lines = (rest + chunk.toString()).split('\n');
    rest = lines.pop()!;
    for (const line of lines) onLine(line);
  });
}

const stdoutListeners = new Set<(line: string) => void>();
let stdoutTapped = false;

/**
 * Sees every line written to this process's stdout, still written as before: where the functions
 * of source mode print (they run in this process), and where the worker threads of bundle mode
 * print through (Node pipes a worker's stdout into its parent's with write()). Returns the undo.
 */
export function onStdoutLine(listener: (line: string) => void): () => void {
  stdoutListeners.add(listener);
  if (!stdoutTapped) {
    stdoutTapped = true;
    const write = process.stdout.write.bind(process.stdout) as (...args: unknown[]) => boolean;
    let rest = '';
    process.stdout.write = ((chunk: unknown, ...args: unknown[]) => {
      if (stdoutListeners.size && (typeof chunk === 'string' || chunk instanceof Uint8Array)) {
        const lines = (rest + (typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString())).split('\n');
        rest = lines.pop()!;
        for (const line of lines) for (const each of stdoutListeners) each(line);
      }
      return write(chunk, ...args);
    }) as typeof process.stdout.write;
  }
  return () => void stdoutListeners.delete(listener);
}
