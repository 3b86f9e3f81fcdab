import { AppError, NotFoundError, registerErrorCodes } from '../platform/errors';
import { registerScriptCodes } from '../platform/redis/script-codes';
import { soldOut } from '../reservations/codes';

/** The deal scripts' reply codes (platform/redis/script-codes.ts). */
export enum CouponCode {
  DealNotFound = -20,
  DealNotOpen = -21,
  DealClosed = -22,
  /** Comes as {coupon id, -23, pending}: the user already holds a coupon of the deal, replayed. */
  AlreadyIssued = -23,
  CouponsSoldOut = -24,
  LimitBelowIssued = -25,
}

const ERRORS = { NOT_OPEN: 409, CLOSED: 409, ALREADY_ISSUED: 409 } as const;

declare module '../platform/errors' {
  interface ErrorStatuses extends Record<keyof typeof ERRORS, number> {}
}

registerErrorCodes('coupons', ERRORS);

export const dealNotOpen = () => new AppError('NOT_OPEN', 'This deal is not open yet');
export const dealClosed = () => new AppError('CLOSED', 'This deal has closed');
export const couponsSoldOut = () => soldOut('All coupons of this deal are issued');

registerScriptCodes('coupons', {
  refusals: {
    [CouponCode.DealNotFound]: () => new NotFoundError('No such deal'),
    [CouponCode.DealNotOpen]: dealNotOpen,
    [CouponCode.DealClosed]: dealClosed,
    [CouponCode.CouponsSoldOut]: couponsSoldOut,
    [CouponCode.LimitBelowIssued]: () => new AppError('CONFLICT', 'The limit cannot go below the coupons already issued'),
  },
  signals: [CouponCode.AlreadyIssued],
});
