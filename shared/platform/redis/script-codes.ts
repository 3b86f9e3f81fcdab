import { AppError, NotFoundError, UnauthenticatedError } from '../errors';

/**
 * Every negative return code of every Lua script, one meaning each, so a reply means the same
 * whichever script gave it. A script's header lists the codes it returns (`-11 sold out …`);
 * test/platform/script-codes.test.ts holds each header to this table.
 */
export enum ScriptCode {
  SessionNotFound = -1,
  NotOnSale = -10,
  SoldOut = -11,
  LimitExceeded = -12,
  IdempotencyMismatch = -13,
  SaleStarted = -14,
  /** Comes as {-15, ms until the rate allows one again}: the caller names the 429 (limits/rate.ts). */
  RateLimited = -15,
  /** The buyer's bucket has too few units, while other buckets may have some: the caller refills. */
  BucketDry = -16,
  /** The owner has another number of buckets than the caller believes: the caller learns it again. */
  LayoutChanged = -17,
  /** A bucket's state is gone (lost with its units): the move waits for a repair to rebuild it. */
  NoState = -18,
  DealNotFound = -20,
  DealNotOpen = -21,
  DealClosed = -22,
  /** Comes as {coupon id, -23, pending}: the user already holds a coupon of the deal, replayed. */
  AlreadyIssued = -23,
  CouponsSoldOut = -24,
  LimitBelowIssued = -25,
  /** The item has a waiting room, and the buyer brought no live pass of its own (forged, expired, used or another's). */
  PassRequired = -26,
  NotAdmitted = -27,
  PlaceLost = -28,
  NotInQueue = -29,
  NoRoom = -30,
  RoomOpened = -31,
  PassExpired = -32,
}

/** The codes a caller acts on itself (they carry data or ask for another step) rather than answer with an error. */
type Signal = ScriptCode.RateLimited | ScriptCode.BucketDry | ScriptCode.LayoutChanged | ScriptCode.NoState | ScriptCode.AlreadyIssued;

/** A code that refuses the request as it is: the client sees its error. */
export type Refusal = Exclude<ScriptCode, Signal>;

const errorFor: Record<Refusal, () => AppError> = {
  [ScriptCode.SessionNotFound]: () => new UnauthenticatedError('Session expired or unknown'),
  [ScriptCode.NotOnSale]: () => new AppError('NOT_ON_SALE', 'This item is not on sale'),
  [ScriptCode.SoldOut]: () => new AppError('SOLD_OUT', 'Not enough stock left'),
  [ScriptCode.LimitExceeded]: () => new AppError('LIMIT_EXCEEDED', 'That would exceed the per-buyer limit for this item'),
  [ScriptCode.IdempotencyMismatch]: () => new AppError('IDEMPOTENCY_MISMATCH', 'This Idempotency-Key was already used for a different request'),
  [ScriptCode.SaleStarted]: () => new AppError('SALE_STARTED', 'This sale already has orders; its stock can no longer be reset'),
  [ScriptCode.DealNotFound]: () => new NotFoundError('No such deal'),
  [ScriptCode.DealNotOpen]: () => new AppError('NOT_OPEN', 'This deal is not open yet'),
  [ScriptCode.DealClosed]: () => new AppError('CLOSED', 'This deal has closed'),
  [ScriptCode.CouponsSoldOut]: () => new AppError('SOLD_OUT', 'All coupons of this deal are issued'),
  [ScriptCode.LimitBelowIssued]: () => new AppError('CONFLICT', 'The limit cannot go below the coupons already issued'),
  [ScriptCode.PassRequired]: () => new AppError('PASS_REQUIRED', 'This sale has a waiting room: order with your live pass (the Waiting-Room-Pass header)'),
  [ScriptCode.NotAdmitted]: () => new AppError('NOT_ADMITTED', 'Your turn in the waiting room has not come yet'),
  [ScriptCode.PlaceLost]: () => new AppError('PLACE_LOST', 'Your turn came and its grace passed without a claim: your place is lost'),
  [ScriptCode.PassExpired]: () => new AppError('PASS_EXPIRED', 'Your pass expired before an order used it: its unit went to the next in line'),
  [ScriptCode.NotInQueue]: () => new NotFoundError('You are not in this waiting room; join it first'),
  [ScriptCode.NoRoom]: () => new NotFoundError('This item has no waiting room'),
  [ScriptCode.RoomOpened]: () => new AppError('CONFLICT', 'The waiting room has opened; its opening time can no longer change'),
};

export function isRefusal(reply: unknown): reply is Refusal {
  return typeof reply === 'number' && reply < 0 && reply in errorFor;
}

export function scriptError(code: Refusal): AppError {
  return errorFor[code]();
}
