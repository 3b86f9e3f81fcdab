import { AppError, registerErrorCodes } from '../platform/errors';
import { registerScriptCodes } from '../platform/redis/script-codes';

/** The buckets' reply codes (platform/redis/script-codes.ts): signals its callers act on. */
export enum BucketCode {
  /** The buyer's bucket has too few units, while other buckets may have some: the caller refills. */
  BucketDry = -16,
  /** The owner has another number of buckets than the caller believes: the caller learns it again. */
  LayoutChanged = -17,
  /** A bucket's state is gone (lost with its units): the move waits for a repair to rebuild it. */
  NoState = -18,
}

/** Every kind of reservation runs out the same way. */
const ERRORS = { SOLD_OUT: 409 } as const;

declare module '../platform/errors' {
  interface ErrorStatuses extends Record<keyof typeof ERRORS, number> {}
}

registerErrorCodes('reservations', ERRORS);
registerScriptCodes('reservations', { signals: [BucketCode.BucketDry, BucketCode.LayoutChanged, BucketCode.NoState] });

export const soldOut = (message: string) => new AppError('SOLD_OUT', message);
