import { AppError, NotFoundError, UnauthenticatedError } from '../errors';

/** Negative return codes of every Lua script, each mapped below to the error a client sees. */
export enum ScriptCode {
  SessionNotFound = -1,
  NotOnSale = -10,
  SoldOut = -11,
  LimitExceeded = -12,
  IdempotencyMismatch = -13,
  SaleStarted = -14,
  DealNotFound = -20,
  DealNotOpen = -21,
  DealClosed = -22,
  CouponsSoldOut = -24,
  LimitBelowIssued = -25,
}

const errorFor: Record<ScriptCode, () => AppError> = {
  [ScriptCode.SessionNotFound]: () => new UnauthenticatedError('Session expired or unknown'),
  [ScriptCode.NotOnSale]: () => new AppError('NOT_ON_SALE', 'This item is not on sale'),
  [ScriptCode.SoldOut]: () => new AppError('SOLD_OUT', 'Not enough stock left'),
  [ScriptCode.LimitExceeded]: () => new AppError('LIMIT_EXCEEDED', 'That would exceed the per-buyer limit for this item'),
  [ScriptCode.IdempotencyMismatch]: () =>
    new AppError('IDEMPOTENCY_MISMATCH', 'This Idempotency-Key was already used for a different request'),
  [ScriptCode.SaleStarted]: () => new AppError('SALE_STARTED', 'This sale already has orders; its stock can no longer be reset'),
  [ScriptCode.DealNotFound]: () => new NotFoundError('No such deal'),
  [ScriptCode.DealNotOpen]: () => new AppError('NOT_OPEN', 'This deal is not open yet'),
  [ScriptCode.DealClosed]: () => new AppError('CLOSED', 'This deal has closed'),
  [ScriptCode.CouponsSoldOut]: () => new AppError('SOLD_OUT', 'All coupons of this deal are issued'),
  [ScriptCode.LimitBelowIssued]: () => new AppError('CONFLICT', 'The limit cannot go below the coupons already issued'),
};

export function isScriptCode(reply: unknown): reply is ScriptCode {
  return typeof reply === 'number' && reply < 0 && reply in errorFor;
}

export function scriptError(code: ScriptCode): AppError {
  return errorFor[code]();
}
