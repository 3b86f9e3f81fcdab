/**
 * What a bench scenario is given and returns: its own module, so that load/bench.ts, which loads
 * the scenarios, and the scenarios, which implement this contract, do not import each other.
 */
import type { Options } from 'autocannon';
import type { FloorShape } from './floor';
import type { AgainstCeiling, LoadResult } from './measure';
import type { BenchRuntime, BenchTwin } from './twin';
import type { LambdaPerRequest } from './invocations';

export interface ScenarioContext {
  twin: BenchTwin;
  /** How the twin runs the functions, for a scenario that starts a second twin to compare with. */
  runtime: BenchRuntime;
  connections: number;
  duration: number;
  log(message: string): void;
  /** The scenario's steady load alternated with the gateway's ceiling, and with its floor when given (see againstCeiling, support/floor.ts). */
  againstCeiling(load: Pick<Options, 'requests' | 'url'>, label: string, floor?: FloorShape): Promise<AgainstCeiling>;
}

/** A design the bench compared, under the key its CPU windows were measured with (startCpuMeter). */
export interface Design {
  label: string;
  load: Pick<LoadResult, 'rps' | 'p99_ms'>;
  /** What Lambda would bill and log per request of the design's run (support/invocations.ts), for `npm run cost`. */
  lambda_per_request?: Record<string, LambdaPerRequest>;
}

export interface ScenarioResult {
  load: LoadResult;
  /** Surge ('surge', first) and every design it was compared with, for the report's summary. */
  designs?: Record<string, Design>;
  /** Set by scenarios that measured their load against the ceiling in turns. */
  ceiling?: LoadResult;
  /** Set by scenarios that also measured their load against its floor in those turns. */
  floor?: LoadResult;
  baseline?: Record<string, unknown>;
  extra?: Record<string, unknown>;
  invariants: Record<string, { expected: unknown; actual: unknown }>;
}

export type Scenario = (context: ScenarioContext) => Promise<ScenarioResult>;
