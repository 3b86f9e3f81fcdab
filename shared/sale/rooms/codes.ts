import { AppError, NotFoundError, registerErrorCodes } from '../../platform/errors';
import { registerScriptCodes } from '../../platform/redis/script-codes';

/** The waiting room scripts' reply codes (platform/redis/script-codes.ts). */
export enum RoomCode {
  NotAdmitted = -27,
  PlaceLost = -28,
  NotInQueue = -29,
  NoRoom = -30,
  RoomOpened = -31,
  PassExpired = -32,
}

const ERRORS = { NOT_ADMITTED: 409, PLACE_LOST: 409, PASS_EXPIRED: 410 } as const;

declare module '../../platform/errors' {
  interface ErrorStatuses extends Record<keyof typeof ERRORS, number> {}
}

registerErrorCodes('sale/rooms', ERRORS);
registerScriptCodes('sale/rooms', {
  refusals: {
    [RoomCode.NotAdmitted]: () => new AppError('NOT_ADMITTED', 'Your turn in the waiting room has not come yet'),
    [RoomCode.PlaceLost]: () => new AppError('PLACE_LOST', 'Your turn came and its grace passed without a claim: your place is lost'),
    [RoomCode.PassExpired]: () => new AppError('PASS_EXPIRED', 'Your pass expired before an order used it: its unit went to the next in line'),
    [RoomCode.NotInQueue]: () => new NotFoundError('You are not in this waiting room; join it first'),
    [RoomCode.NoRoom]: () => new NotFoundError('This item has no waiting room'),
    [RoomCode.RoomOpened]: () => new AppError('CONFLICT', 'The waiting room has opened; its opening time can no longer change'),
  },
});
