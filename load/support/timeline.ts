/**
 * What a bench run did over time, for its HTML report: every load phase's answers per second and
 * latency percentiles per second (HdrHistogram, 3 significant digits, from every answer's own
 * latency), the races' remaining stock, and the CPU each component used, second by second.
 *
 * One timeline per run, started by load/bench.ts; drive() and race() record into it when there is
 * one, so scenarios need not thread it through.
 */
import { build, type Histogram } from 'hdr-histogram-js';
import { machineCpuSeconds, processCpuSeconds } from './cpu';
import { round } from './round';

/** How the load was generated: closed (each connection waits for its answer before its next request) or open (arrivals at a rate). */
export type Loop = 'closed' | 'open';

export interface PhaseSeries {
  label: string;
  loop: Loop;
  generator: string;
  /** Seconds since the run started, at each second's start. */
  t: number[];
  /** Answers per second (any status). */
  rps: number[];
  p50_ms: number[];
  p90_ms: number[];
  p99_ms: number[];
  p999_ms: number[];
  max_ms: number[];
  /** Over the whole phase. */
  summary: { answers: number; p50_ms: number; p90_ms: number; p99_ms: number; p999_ms: number; max_ms: number };
}

export interface StockSeries {
  label: string;
  t: number[];
  remaining: number[];
}

export interface CpuSeries {
  t: number[];
  /** Per cent of one core, by component; "machine" is all cores together. */
  percent: Record<string, number[]>;
}

export interface TimelineData {
  started_at: string;
  phases: PhaseSeries[];
  stock: StockSeries[];
  cpu: CpuSeries;
}

const PERCENTILES = { p50_ms: 50, p90_ms: 90, p99_ms: 99, p999_ms: 99.9 } as const;
const STOCK_SAMPLE_MS = 250;
const CPU_SAMPLE_MS = 1_000;

/** Microseconds, up to an hour: answers slower than that are not answers. */
const newHistogram = (): Histogram =>
  build({ useWebAssembly: false, autoResize: true, lowestDiscernibleValue: 1, highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: 3 });
const ms = (h: Histogram, percentile: number) => round(h.getValueAtPercentile(percentile) / 1000, 3);

export interface PhaseRecorder {
  /** One answer, with its latency in milliseconds. */
  answer(latencyMs: number): void;
  end(): void;
}

export class Timeline {
  private readonly origin = performance.now();
  private readonly startedAt = new Date().toISOString();
  private readonly phases: PhaseSeries[] = [];
  private readonly stock: StockSeries[] = [];
  private readonly cpu: CpuSeries = { t: [], percent: {} };
  private readonly cpuTimer: NodeJS.Timeout;

  constructor(pids: Record<string, number | undefined>) {
    const components = Object.entries(pids).filter((entry): entry is [string, number] => Boolean(entry[1]));
    for (const [name] of [...components, ['machine']]) this.cpu.percent[name!] = [];
    let last = {
      at: performance.now(),
      machine: machineCpuSeconds(),
      ...Object.fromEntries(components.map(([name, pid]) => [name, processCpuSeconds(pid)])),
    } as Record<string, number>;
    this.cpuTimer = setInterval(() => {
      const now = {
        at: performance.now(),
        machine: machineCpuSeconds(),
        ...Object.fromEntries(components.map(([name, pid]) => [name, processCpuSeconds(pid)])),
      } as Record<string, number>;
      const wall = (now.at! - last.at!) / 1000;
      this.cpu.t.push(this.seconds(last.at!));
      for (const name of Object.keys(this.cpu.percent)) this.cpu.percent[name]!.push(round(((now[name]! - last[name]!) / wall) * 100, 1));
      last = now;
    }, CPU_SAMPLE_MS);
    this.cpuTimer.unref();
  }

  /** Seconds since the run started. */
  private seconds(at = performance.now()): number {
    return round((at - this.origin) / 1000, 3);
  }

  startPhase(label: string, loop: Loop, generator: string): PhaseRecorder {
    const start = performance.now();
    const perSecond: Histogram[] = [];
    const whole = newHistogram();
    return {
      answer: (latencyMs) => {
        const second = Math.floor((performance.now() - start) / 1000);
        for (let s = perSecond.length; s <= second; s++) perSecond.push(newHistogram());
        const micros = Math.max(1, Math.round(latencyMs * 1000));
        perSecond[second]!.recordValue(micros);
        whole.recordValue(micros);
      },
      end: () => {
        const elapsed = (performance.now() - start) / 1000;
        const series: PhaseSeries = {
          label,
          loop,
          generator,
          t: [],
          rps: [],
          p50_ms: [],
          p90_ms: [],
          p99_ms: [],
          p999_ms: [],
          max_ms: [],
          summary: { answers: whole.totalCount, ...percentilesOf(whole), max_ms: round(whole.maxValue / 1000, 3) },
        };
        perSecond.forEach((h, s) => {
          // The last second may be cut short: its rate is over the part that ran.
          const length = Math.min(1, elapsed - s);
          if (h.totalCount === 0 || length <= 0) return;
          series.t.push(this.seconds(start + s * 1000));
          series.rps.push(round(h.totalCount / length, 1));
          for (const [key, value] of Object.entries(percentilesOf(h))) series[key as keyof typeof PERCENTILES].push(value);
          series.max_ms.push(round(h.maxValue / 1000, 3));
        });
        this.phases.push(series);
      },
    };
  }

  /** Samples what is left of a race's stock while `during` runs, and once after. */
  async sampleStock<T>(label: string, remaining: () => Promise<number>, during: Promise<T>): Promise<T> {
    const series: StockSeries = { label, t: [], remaining: [] };
    this.stock.push(series);
    const sample = async () => {
      const at = this.seconds();
      const value = await remaining();
      series.t.push(at);
      series.remaining.push(value);
    };
    let done = false;
    const sampling = (async () => {
      while (!done) {
        await sample().catch(() => undefined);
        await new Promise((r) => setTimeout(r, STOCK_SAMPLE_MS));
      }
    })();
    try {
      return await during;
    } finally {
      done = true;
      await sampling;
      await sample().catch(() => undefined);
    }
  }

  stop(): TimelineData {
    clearInterval(this.cpuTimer);
    return { started_at: this.startedAt, phases: this.phases, stock: this.stock, cpu: this.cpu };
  }
}

function percentilesOf(h: Histogram): Record<keyof typeof PERCENTILES, number> {
  return Object.fromEntries(Object.entries(PERCENTILES).map(([key, p]) => [key, ms(h, p)])) as Record<keyof typeof PERCENTILES, number>;
}

let current: Timeline | undefined;

/** Starts the run's timeline; drive() and race() record into it from now on. */
export function startTimeline(pids: Record<string, number | undefined>): Timeline {
  current = new Timeline(pids);
  return current;
}

export function currentTimeline(): Timeline | undefined {
  return current;
}
