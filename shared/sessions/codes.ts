import { registerErrorCodes, UnauthenticatedError } from '../platform/errors';
import { registerScriptCodes } from '../platform/redis/script-codes';

/** The session scripts' reply codes (platform/redis/script-codes.ts). */
export enum SessionCode {
  SessionNotFound = -1,
}

const ERRORS = { INVALID_CREDENTIALS: 401, EMAIL_TAKEN: 409 } as const;

declare module '../platform/errors' {
  interface ErrorStatuses extends Record<keyof typeof ERRORS, number> {}
}

registerErrorCodes('sessions', ERRORS);
registerScriptCodes('sessions', { refusals: { [SessionCode.SessionNotFound]: () => new UnauthenticatedError('Session expired or unknown') } });
