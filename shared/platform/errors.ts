/**
 * Every error a client can be shown, with its status, in one place. Handlers throw AppError with a
 * code; the HTTP error handler turns it into {"error":{"code","message"}}. Anything else is a 500.
 */
export const errorStatus = {
  BAD_JSON: 400,
  VALIDATION_FAILED: 400,
  UNAUTHENTICATED: 401,
  INVALID_CREDENTIALS: 401,
  FORBIDDEN: 403,
  /** An order on a sale with a waiting room without a live pass of the buyer's own. */
  PASS_REQUIRED: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  EMAIL_TAKEN: 409,
  SOLD_OUT: 409,
  LIMIT_EXCEEDED: 409,
  IDEMPOTENCY_MISMATCH: 409,
  NOT_ON_SALE: 409,
  SALE_STARTED: 409,
  NOT_OPEN: 409,
  CLOSED: 409,
  ALREADY_ISSUED: 409,
  NOT_ADMITTED: 409,
  PLACE_LOST: 409,
  PASS_EXPIRED: 410,
  UNSUPPORTED_MEDIA_TYPE: 415,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export class AppError extends Error {
  override name = 'AppError';
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.status = errorStatus[code];
  }
}

/** Too many requests: the client is told when to come back (Retry-After, in whole seconds). */
export class RateLimitedError extends AppError {
  override name = 'RateLimitedError';
  readonly retryAfterSeconds: number;
  constructor(retryAfterMs: number, message = 'Too many requests; try again later') {
    super('RATE_LIMITED', message);
    this.retryAfterSeconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  }
}

export class UnauthenticatedError extends AppError {
  override name = 'UnauthenticatedError';
  constructor(message = 'Sign in first') {
    super('UNAUTHENTICATED', message);
  }
}

export class ForbiddenError extends AppError {
  override name = 'ForbiddenError';
  constructor(message = 'You may not do that') {
    super('FORBIDDEN', message);
  }
}

export class NotFoundError extends AppError {
  override name = 'NotFoundError';
  constructor(message = 'Not found') {
    super('NOT_FOUND', message);
  }
}

/** A dependency failed in a way the client may retry; unlike other 5xx it is shown as such. */
export class UnavailableError extends AppError {
  override name = 'UnavailableError';
  constructor(message = 'Try again shortly') {
    super('UNAVAILABLE', message);
  }
}

/**
 * A store refused the credentials: while a secret rotates, until the instance has looked it up
 * again and reconnected. Nothing was done, so the client may retry.
 */
export function isRefusedCredentials(error: unknown): boolean {
  const { message = '', errno } = (error ?? {}) as { message?: string; errno?: number };
  return /^(WRONGPASS|NOAUTH)\b/.test(message) || errno === 1045;
}

/** Failures of the connection itself, and a read that MySQL did not answer within its timeout (mysql2 then drops the connection). */
const CONNECTION_FAILURES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
]);

/**
 * MySQL's refusals of a statement that a retry may get past, the transaction rolled back: a
 * writer turned reader by a failover (--read-only), a deadlock or a lock held past its wait, a
 * refusal raised in the database itself (a trigger's or an operator's SIGNAL).
 */
const MYSQL_REFUSED_UNRUN = new Set(['ER_OPTION_PREVENTS_STATEMENT', 'ER_LOCK_DEADLOCK', 'ER_LOCK_WAIT_TIMEOUT', 'ER_SIGNAL_EXCEPTION']);

/**
 * What ioredis says while Redis is away: no connection within one reconnect attempt, none at all
 * while reconnecting fails, a command that was not answered within its timeout, a transaction cut
 * short by a lost connection.
 */
const REDIS_AWAY =
  /^(Reached the max retries per request limit|Connection is closed|Stream isn't writeable|Cluster isn't ready|None of startup nodes is available|Command timed out|Command aborted due to connection close)/;

/**
 * Replies of a Redis that did not run the command: a replica after a failover, a node loading its
 * data or cut off from its primary, a node out of memory (noeviction refuses a write, and a script
 * at its first write, before anything of it is done), a primary cut off from its replicas
 * (min-replicas-to-write refuses writes alike).
 */
const REDIS_REFUSED_UNRUN = /^(READONLY|LOADING|MASTERDOWN|CLUSTERDOWN|OOM|NOREPLICAS)\b/;

/**
 * A dependency (Redis, MySQL) is away or failing over: the client may retry (what a retry sends
 * again is idempotent: an Idempotency-Key, one coupon per user, a new session), so it is a 503,
 * not a 500.
 */
export function isDependencyUnavailable(error: unknown): boolean {
  const { message = '', code, previousErrors } = (error ?? {}) as { message?: string; code?: unknown; previousErrors?: unknown };
  // A transaction Redis discarded because its commands were refused or cut short: none of it ran.
  if (/^EXECABORT\b/.test(message)) return Array.isArray(previousErrors) && previousErrors.length > 0 && previousErrors.every(isDependencyUnavailable);
  return (
    (typeof code === 'string' && (CONNECTION_FAILURES.has(code) || MYSQL_REFUSED_UNRUN.has(code))) ||
    REDIS_AWAY.test(message) ||
    REDIS_REFUSED_UNRUN.test(message)
  );
}
