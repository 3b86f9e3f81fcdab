/**
 * The components a bench puts CPU on, and the shape of its comparison of Surge with the designs it
 * is measured against: shared by the bench, which measures, and its report, which draws. Surge's
 * product is its functions and the stores they use; the rest stands in for AWS on the twin
 * (API Gateway, Lambda's SQS poller, SQS), so a design's cost is read from the first group.
 */
export const PRODUCT_COMPONENTS = ['functions', 'redis', 'mariadb'] as const;
export const STAND_IN_COMPONENTS = ['gateway_emulation', 'poller', 'fauxqs'] as const;

export type ProductComponent = (typeof PRODUCT_COMPONENTS)[number];
export type StandInComponent = (typeof STAND_IN_COMPONENTS)[number];
/** 'unattributed': CPU the bench measured on the machine but could put on no component. */
export type CpuComponent = ProductComponent | StandInComponent | 'unattributed';

/** One design as the bench JSON's "comparison" has it, keyed by design ("surge" first). */
export interface DesignComparison {
  label: string;
  rps: number;
  p99_ms: number;
  /** Surge's req/s over this design's: 1 for Surge itself. */
  ratio: number;
  /** Any subset of the components. */
  cpu_ms_per_request: Partial<Record<CpuComponent, number>>;
  product_ms_per_request: number;
  stand_in_ms_per_request: number;
}

/** Where Surge's CPU went, by function, when the bench profiled it. */
export interface CpuProfile {
  method: string;
  top_functions: {
    function: string;
    where: string;
    self_ms_per_request: number;
    /** Of all the CPU the profile saw, from 0 to 1. */
    share: number;
  }[];
}
