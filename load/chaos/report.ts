/**
 * What every fault-injection scenario takes and gives back (`load/chaos/scenarios/<name>.ts`
 * exports `run(options: ChaosOptions): Promise<ChaosReport>`); `npm run chaos` prints the report
 * as its last line and fails when an invariant does not hold.
 */
export interface ChaosOptions {
  scale: 'full' | 'small';
  /** What the crowd races for: an item's units (orders) or a deal's coupons. */
  kind: 'orders' | 'coupons';
  bundles: boolean;
  /** How long a fault that has a length lasts, in seconds, where the scenario takes one (redis-failover: replication held). */
  faultSeconds?: number;
  /** deploy-mid-sale: the commit whose code serves first (the release before). */
  from?: string;
  log: (message: string) => void;
}

export interface ChaosReport {
  scenario: string;
  /**
   * Reservations acknowledged, the ground truth of what was promised: orders answered 202,
   * coupons answered 201 or named by a 409 ALREADY_ISSUED.
   */
  acknowledged: number;
  confirmed_rows: number;
  /** Confirmed units beyond the capacity (initial stock, coupon limit), or the Redis counter's shortfall below 0. */
  oversold: number;
  /** Acknowledged reservations stored neither as confirmed nor as rejected. */
  lost_acknowledged: number;
  /** Confirmed rows beyond one per buyer (each buyer asks once: one order under one key, one coupon). */
  duplicates: number;
  /** Acknowledged reservations the database guard stored as 'rejected'. */
  rejected_acknowledged: number;
  /** Every 5xx answer, 503s included. */
  http_5xx: number;
  http_503: number;
  /** From the end of the fault until every invariant held (or until the harness gave up). */
  recovered_s: number;
  invariants: Record<string, boolean>;
  [extra: string]: unknown;
}
