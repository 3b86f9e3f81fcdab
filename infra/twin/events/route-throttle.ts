/**
 * API Gateway's throttle of one route, as it documents it: a token bucket holding the burst,
 * refilled at the rate, one token a request; a request that finds none is answered 429.
 * A dozen lines by hand: the limiter packages on npm count per key and per window, and none is the
 * two numbers of a stage's RouteSettings.
 */
import type { RouteThrottle } from '../../../functions/table';

export function routeThrottleBucket({ rateLimit, burstLimit }: RouteThrottle, now: () => number = performance.now.bind(performance)) {
  let tokens = burstLimit;
  let at = now();
  return {
    /** Whether a request arriving now passes, taking its token. */
    take(): boolean {
      const t = now();
      tokens = Math.min(burstLimit, tokens + ((t - at) * rateLimit) / 1000);
      at = t;
      if (tokens < 1) return false;
      tokens -= 1;
      return true;
    },
  };
}
