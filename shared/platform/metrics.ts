import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { MiddlewareObj } from '@middy/core';
import { serviceEnvironment } from './config';
import { loggableError, logger } from './logger';

/** Where every business metric of Surge goes in CloudWatch; the stack's dashboard and alarms read it. */
export const METRICS_NAMESPACE = 'Surge';

/**
 * How long a busy instance holds what it counted before it prints it: 5 s. CloudWatch sums per
 * minute (the dashboard's and the alarms' period), and each line is stamped with the time its
 * oldest value was counted, so holding moves no value to another minute; at 10,000 req/s a busy
 * instance prints one line per 5 s instead of one per invocation that counted something (every
 * catalog cache hit). An idle instance prints what it holds when its next invocation ends (or a
 * thawed instance's timer fires), still stamped with when it was counted, so it arrives late but
 * in its minute (CloudWatch takes timestamps up to 14 days old).
 *
 * What is lost: Lambda may freeze an instance after an invocation and never thaw it (scale-in, a
 * new deploy). What it counted since its last line is then never printed: at most this interval's
 * worth of one instance's counts and timings, and no urgent count of an invocation that ended
 * (those print as it ends; an invocation that times out ends nothing, as before batching). Within
 * a long-running process (the twin) a timer prints held values once the interval has passed; on
 * Lambda that timer runs only while the instance is thawed and is not relied upon: the end of
 * each invocation checks the interval itself.
 */
export const METRICS_FLUSH_MS = 5_000;

/** EMF takes at most 100 values of one metric in a line (Powertools' MAX_METRIC_VALUES_SIZE): a timing held this many times prints with its invocation. */
export const MAX_HELD_VALUES = 100;

let instance: Metrics | undefined;

/**
 * The instance's one Metrics, made on first use (importing this module reads no environment):
 * CloudWatch's Embedded Metric Format, one JSON line on stdout per flush, which Lambda's log
 * capture turns into metrics with no API call. Its one dimension is the service
 * (POWERTOOLS_SERVICE_NAME), so the dashboard's queries need no function names.
 * POWERTOOLS_METRICS_DISABLED=true turns it off.
 */
function metrics(): Metrics {
  instance ??= new Metrics({ namespace: METRICS_NAMESPACE, serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? serviceEnvironment.POWERTOOLS_SERVICE_NAME });
  return instance;
}

/** What the instance holds until its next line: each count's sum, each timing's and level's values. */
const counts = new Map<string, number>();
const timings = new Map<string, number[]>();
const levels = new Map<string, number[]>();
/** When the oldest held value was recorded; undefined when nothing is held. */
let heldSince: number | undefined;
/** A count that pages someone is held: the invocation's end prints everything. */
let urgentHeld = false;
/** A timing has MAX_HELD_VALUES values held. */
let fullHeld = false;
let timer: ReturnType<typeof setTimeout> | undefined;

/**
 * What Powertools would refuse when printing (at the end of another invocation, or in the timer),
 * refused when recorded instead, where the caller sees it: a bad name or value, one name in two units.
 */
function check(name: string, value: number, ...others: Map<string, unknown>[]): void {
  if (name.length < 1 || name.length > 255) throw new RangeError(`A metric name has 1 to 255 characters: ${name}`);
  if (!Number.isFinite(value)) throw new RangeError(`${value} is not a valid value of ${name}`);
  if (others.some((other) => other.has(name))) throw new RangeError(`${name} is recorded as two kinds of metric (count, timing, level)`);
}

function hold(): void {
  if (heldSince !== undefined) return;
  heldSince = Date.now();
  // Only for a process that is never frozen (the twin): see METRICS_FLUSH_MS. unref: it keeps no process alive.
  timer = setTimeout(publishHeldMetrics, METRICS_FLUSH_MS);
  timer.unref?.();
}

export interface CountOptions {
  /**
   * The count pages someone (an alarm of infra/observability.ts reads it): printed when this
   * invocation ends, with everything held, not up to METRICS_FLUSH_MS later.
   */
  urgent?: boolean;
}

/**
 * Counts one business event (or `by` of them), e.g. `orders.accepted`. Held in the instance and
 * summed, so many invocations' counts print as one value; printed at the end of an invocation once
 * METRICS_FLUSH_MS has passed since the oldest held value, or at once with `urgent`.
 */
export function count(name: string, by = 1, options: CountOptions = {}): void {
  check(name, by, timings, levels);
  hold();
  counts.set(name, (counts.get(name) ?? 0) + by);
  if (options.urgent) urgentHeld = true;
}

/**
 * Records a duration in milliseconds, e.g. `orders.writerLag`; each value is kept, so CloudWatch
 * can give percentiles. Held as counts are; a timing with MAX_HELD_VALUES values prints at the end
 * of its invocation.
 */
export function timing(name: string, milliseconds: number): void {
  check(name, milliseconds, counts, levels);
  keep(timings, name, milliseconds);
}

/**
 * Records how much of something there is now, e.g. `room.waiting`: a count whose values are kept
 * rather than summed, so CloudWatch's Maximum or Average of a minute reads it (its Sum means
 * nothing). Held as timings are.
 */
export function level(name: string, value: number): void {
  check(name, value, counts, timings);
  keep(levels, name, value);
}

function keep(held: Map<string, number[]>, name: string, value: number): void {
  hold();
  let values = held.get(name);
  if (!values) held.set(name, (values = []));
  values.push(value);
  if (values.length >= MAX_HELD_VALUES) fullHeld = true;
}

/**
 * Prints whatever the instance holds now, in as few lines as EMF allows (Powertools starts another
 * line at 100 values of a metric or 100 metrics). Tests call it to start from nothing held.
 */
export function publishHeldMetrics(): void {
  clearTimeout(timer);
  timer = undefined;
  const countedAt = heldSince;
  heldSince = undefined;
  urgentHeld = fullHeld = false;
  if (counts.size === 0 && timings.size === 0 && levels.size === 0) return;
  const held = { counts: [...counts], timings: [...timings], levels: [...levels] };
  counts.clear();
  timings.clear();
  levels.clear();
  // Printing must never fail the invocation that happens to print (its own answer is already
  // made, and the values are mostly others'), nor the process from the timer: logged, and dropped.
  try {
    const m = metrics();
    // Powertools clears the stamp with every line it prints, also the ones it starts itself at 100 values: set before each value.
    const add = (name: string, unit: (typeof MetricUnit)[keyof typeof MetricUnit], value: number) => m.setTimestamp(countedAt!).addMetric(name, unit, value);
    for (const [name, sum] of held.counts) add(name, MetricUnit.Count, sum);
    for (const [name, values] of held.timings) for (const value of values) add(name, MetricUnit.Milliseconds, value);
    for (const [name, values] of held.levels) for (const value of values) add(name, MetricUnit.Count, value);
    if (m.hasStoredMetrics()) m.setTimestamp(countedAt!).publishStoredMetrics();
  } catch (error) {
    logger.error('Held metrics not printed', { error: loggableError(error) });
  }
}

/** Whether the end of an invocation now should print what is held. */
function due(now: number): boolean {
  return heldSince !== undefined && (urgentHeld || fullHeld || now - heldSince >= METRICS_FLUSH_MS);
}

/**
 * At the end of every invocation (returned or failed), prints what the instance holds if it is
 * due: an urgent count, a timing full, or METRICS_FLUSH_MS since the oldest held value. An
 * invocation that recorded nothing may print others' held values; with nothing held nothing is
 * printed (Powertools' logMetrics would warn "No application metrics to publish" on every one).
 * Where invocations overlap in one instance (the twin's shared instances), one line carries
 * several invocations' values: sums stay right.
 */
export function flushMetrics(): MiddlewareObj {
  const flush = () => {
    if (due(Date.now())) publishHeldMetrics();
  };
  return { name: 'flushMetrics', after: flush, onError: flush };
}
