/**
 * What every fault-injection scenario takes and gives back (`load/chaos/scenarios/<name>.ts`
 * exports `run(options: ChaosOptions): Promise<ChaosReport>`); `npm run chaos` prints the report
 * as its last line and fails when an invariant does not hold.
 */
export interface ChaosOptions {
  scale: 'full' | 'small';
  bundles: boolean;
  log: (message: string) => void;
}

export interface ChaosReport {
  scenario: string;
  /** Orders answered 202: the ground truth of what was promised. */
  acknowledged: number;
  confirmed_rows: number;
  /** Confirmed quantity beyond the initial stock, or the Redis counter's shortfall below 0. */
  oversold: number;
  /** Acknowledged orders with no row in MySQL. */
  lost_acknowledged: number;
  /** Rows beyond one per buyer (each buyer sends one order, under one key). */
  duplicates: number;
  /** Acknowledged orders stored as 'rejected' by the database guard. */
  rejected_acknowledged: number;
  /** Every 5xx answer, 503s included. */
  http_5xx: number;
  http_503: number;
  /** From the end of the fault until every invariant held (or until the harness gave up). */
  recovered_s: number;
  invariants: Record<string, boolean>;
  [extra: string]: unknown;
}
