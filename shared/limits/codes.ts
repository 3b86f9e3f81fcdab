import { registerScriptCodes } from '../platform/redis/script-codes';

/** The rates' reply codes (platform/redis/script-codes.ts). */
export enum LimitCode {
  /** Comes as {-15, ms until the rate allows one again}: the caller names the 429 (rate.ts). */
  RateLimited = -15,
}

registerScriptCodes('limits', { signals: [LimitCode.RateLimited] });
