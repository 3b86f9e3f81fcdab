import { AppError, registerErrorCodes } from '../../platform/errors';
import { registerScriptCodes } from '../../platform/redis/script-codes';
import { soldOut } from '../../reservations/codes';

/** The sale scripts' reply codes (platform/redis/script-codes.ts). */
export enum OrderCode {
  NotOnSale = -10,
  SoldOut = -11,
  LimitExceeded = -12,
  IdempotencyMismatch = -13,
  SaleStarted = -14,
  /** The item has a waiting room, and the buyer brought no live pass of its own (forged, expired, used or another's). */
  PassRequired = -26,
}

const ERRORS = { NOT_ON_SALE: 409, LIMIT_EXCEEDED: 409, IDEMPOTENCY_MISMATCH: 409, SALE_STARTED: 409, PASS_REQUIRED: 403 } as const;

declare module '../../platform/errors' {
  interface ErrorStatuses extends Record<keyof typeof ERRORS, number> {}
}

registerErrorCodes('sale/orders', ERRORS);

export const notOnSale = () => new AppError('NOT_ON_SALE', 'This item is not on sale');
export const saleStarted = () => new AppError('SALE_STARTED', 'This sale already has orders; its stock can no longer be reset');

registerScriptCodes('sale/orders', {
  refusals: {
    [OrderCode.NotOnSale]: notOnSale,
    [OrderCode.SoldOut]: () => soldOut('Not enough stock left'),
    [OrderCode.LimitExceeded]: () => new AppError('LIMIT_EXCEEDED', 'That would exceed the per-buyer limit for this item'),
    [OrderCode.IdempotencyMismatch]: () => new AppError('IDEMPOTENCY_MISMATCH', 'This Idempotency-Key was already used for a different request'),
    [OrderCode.SaleStarted]: saleStarted,
    [OrderCode.PassRequired]: () => new AppError('PASS_REQUIRED', 'This sale has a waiting room: order with your live pass (the Waiting-Room-Pass header)'),
  },
});
