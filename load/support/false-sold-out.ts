/** One buyer's answer while a hot item sells out: when it was asked and answered (ms, one clock), and what. */
export interface Answer {
  startedAt: number;
  answeredAt: number;
  /** 'reserved', or the error code (SOLD_OUT, …). */
  outcome: string;
}

/**
 * SOLD_OUT answers given before the last unit was reserved, every buyer asking for one unit and
 * nothing given back meanwhile: a SOLD_OUT answered before another buyer even asked, who then
 * got a unit, was given while that unit remained. Counts only what is certain (the two requests
 * did not overlap), so it can miss a false answer but never invent one.
 */
export function falseSoldOut(answers: Answer[]): number {
  const lastAsked = Math.max(...answers.filter((a) => a.outcome === 'reserved').map((a) => a.startedAt));
  return answers.filter((a) => a.outcome === 'SOLD_OUT' && a.answeredAt < lastAsked).length;
}
