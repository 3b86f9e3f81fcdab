/**
 * The error codes a client can be shown, with their statuses: the platform's own here, each
 * capability's in its codes.ts, registered through registerErrorCodes. Handlers throw AppError
 * with a code; the HTTP error handler turns it into {"error":{"code","message"}}. Anything else is
 * a 500.
 */
const PLATFORM_CODES = {
  BAD_JSON: 400,
  VALIDATION_FAILED: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  UNSUPPORTED_MEDIA_TYPE: 415,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  UNAVAILABLE: 503,
} as const;

/**
 * Every code, by name: the platform's, and each capability's, which its codes.ts adds to this
 * interface (`declare module`) as it registers them, so a route's list of codes is checked.
 */
export interface ErrorStatuses extends Record<keyof typeof PLATFORM_CODES, number> {}

export type ErrorCode = keyof ErrorStatuses;

const registered = new Map<string, { status: number; owner: string }>();

/**
 * Registers a capability's codes under its name: a code another capability has registered throws,
 * so each code means one thing, whoever answers it.
 */
export function registerErrorCodes(owner: string, codes: Readonly<Record<string, number>>): void {
  for (const [code, status] of Object.entries(codes)) {
    const known = registered.get(code);
    if (known && (known.owner !== owner || known.status !== status)) throw new Error(`The error code ${code} is ${known.owner}'s; ${owner} cannot register it`);
    registered.set(code, { status, owner });
  }
}

registerErrorCodes('platform', PLATFORM_CODES);

/** A registered code's HTTP status; a code never registered is the code's bug, thrown as one. */
export function errorStatus(code: ErrorCode): number {
  const known = registered.get(code);
  if (!known) throw new Error(`The error code ${code} is not registered: its capability's codes.ts was never imported`);
  return known.status;
}

/** Every code registered so far, with its status and owner. */
export const registeredErrorCodes = (): ReadonlyMap<string, { status: number; owner: string }> => registered;

export class AppError extends Error {
  override name = 'AppError';
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    // An AppError is an answer (sold out, limited, signed out), never read for its stack, and a flood
    // of refusals is a sale's common case: capturing the stack was ~6 µs of each refused request.
    // Every other Error, a fault's, keeps its stack.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = stackTraceLimit;
    this.status = errorStatus(code);
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
  /** `cause`: the failure this answers for (a Redis timeout, say), logged with the 503 and never shown to the client. */
  constructor(message = 'Try again shortly', cause?: unknown) {
    super('UNAVAILABLE', message);
    if (cause !== undefined) this.cause = cause;
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
