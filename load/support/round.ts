/** Rounds to a number of decimal digits, for the benches' JSON and reports. */
export function round(n: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
