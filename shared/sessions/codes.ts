import { registerErrorCodes } from '../platform/errors';

const ERRORS = { INVALID_CREDENTIALS: 401, EMAIL_TAKEN: 409 } as const;

declare module '../platform/errors' {
  interface ErrorStatuses extends Record<keyof typeof ERRORS, number> {}
}

registerErrorCodes('sessions', ERRORS);
