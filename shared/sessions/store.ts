import { createHash, randomBytes } from 'node:crypto';
import { redis } from '../platform/clients/redis';
import { readEnv, sessionEnv } from '../platform/config';
import { UnauthenticatedError, UnavailableError } from '../platform/errors';
import { logger } from '../platform/logger';
import { once } from '../platform/once';
import './codes';
import { luaScript } from '../platform/redis/script';
import type { Role } from './account-rules';

const settings = once(() => {
  const env = readEnv(sessionEnv);
  return { ...env, idleMs: env.SESSION_IDLE_SECONDS * 1000, absoluteMs: env.SESSION_ABSOLUTE_SECONDS * 1000 };
});

const createScript = luaScript<[session: string, index: string], [sessionId: string, value: string, now: number, idleMs: number, absoluteMs: number]>(
  new URL('./lua/session-create-2.lua', import.meta.url),
);
const destroyScript = luaScript<[session: string, index: string], [sessionId: string]>(new URL('./lua/session-destroy-2.lua', import.meta.url));
const destroyAllScript = luaScript<[index: string], [sessionKeyPrefix: string]>(new URL('./lua/sessions-destroy-all-1.lua', import.meta.url));

export const SESSION_COOKIE = 'sid';

/** The signed-in caller, as handlers see it. */
export interface Principal {
  userId: number;
  role: Role;
  email: string;
}

/**
 * The cookie carries `<userId>.<sessionId>` so that a session and its user's index share the
 * hash tag {user:<id>}: sign-in and sign-out-everywhere stay atomic in ElastiCache cluster mode.
 * The user id in it is no credential: only the 128-bit random session id is.
 */
export interface SessionHandle {
  userId: number;
  sessionId: string;
}

const COOKIE_VALUE = /^([1-9][0-9]{0,15})\.([A-Za-z0-9_-]{22})$/;

export function parseSessionCookie(value: string | undefined): SessionHandle | undefined {
  const match = value === undefined ? null : COOKIE_VALUE.exec(value);
  return match ? { userId: Number(match[1]), sessionId: match[2]! } : undefined;
}

const userTag = (userId: number) => `{user:${userId}}`;
const sessionKeyPrefix = (userId: number) => `${userTag(userId)}:session:`;
/** The Redis key of a session: under its user's hash tag, beside the user's index of sessions. */
export const sessionKey = ({ userId, sessionId }: SessionHandle) => sessionKeyPrefix(userId) + sessionId;
const indexKey = (userId: number) => `${userTag(userId)}:sessions`;

const sessionRef = (sessionId: string) => createHash('sha256').update(sessionId).digest('hex').slice(0, 12);

export function cookieValue(handle: SessionHandle): string {
  return `${handle.userId}.${handle.sessionId}`;
}

export function sessionCookie(handle: SessionHandle): string {
  return serializeCookie(cookieValue(handle), settings().SESSION_ABSOLUTE_SECONDS);
}

export function clearedSessionCookie(): string {
  return serializeCookie('', 0);
}

function serializeCookie(value: string, maxAgeSeconds: number): string {
  const secure = settings().COOKIE_SECURE ? '; Secure' : '';
  return `${SESSION_COOKIE}=${value}; Max-Age=${maxAgeSeconds}; Path=/; HttpOnly; SameSite=Lax${secure}`;
}

export async function createSession(user: { id: number; role: Role; email: string }, now = Date.now()) {
  const handle: SessionHandle = { userId: user.id, sessionId: randomBytes(16).toString('base64url') };
  await createScript.run(
    redis(),
    [sessionKey(handle), indexKey(user.id)],
    [handle.sessionId, sessionValue(user, now + settings().absoluteMs), now, settings().idleMs, settings().absoluteMs],
  );
  return handle;
}

/**
 * Signs in a user who has just proved who they are: a new session, and its Set-Cookie header. A
 * session id presented before sign-in is destroyed, never promoted (session fixation).
 */
export async function signIn(user: { id: number; role: Role; email: string }, presentedCookie: string | undefined): Promise<string> {
  const presented = parseSessionCookie(presentedCookie);
  const [session] = await Promise.all([createSession(user), presented && destroySession(presented)]);
  logger.info('Signed in', { userId: user.id, sessionRef: sessionRef(session.sessionId) });
  return sessionCookie(session);
}

/**
 * A session's value, one string: `<user id>\t<role>\t<absolute expiry, ms>\t<email>`, the email
 * last so that nothing in it can shift the rest. One string, rather than a hash's fields, so that
 * one command reads it and slides its idle timeout (GETEX): the hash took two, HMGET and PEXPIRE,
 * which cost the function ~4 µs and Redis ~1 µs more a request than GETEX (a scratch run, 50 in
 * flight on the functions' client); a script doing both cost Redis ~8 µs against their ~3.
 */
export function sessionValue(user: { id: number; role: Role; email: string }, expiresAt: number): string {
  return `${user.id}\t${user.role}\t${expiresAt}\t${user.email}`;
}

/** A session value's principal and absolute expiry, or undefined for a value no release writes. */
function parseSessionValue(value: string): (Principal & { expiresAt: number }) | undefined {
  const afterId = value.indexOf('\t');
  const afterRole = value.indexOf('\t', afterId + 1);
  const afterExpiry = afterRole < 0 ? -1 : value.indexOf('\t', afterRole + 1);
  if (afterId < 0 || afterExpiry < 0) return undefined;
  return {
    userId: Number(value.slice(0, afterId)),
    role: value.slice(afterId + 1, afterRole) as Role,
    expiresAt: Number(value.slice(afterRole + 1, afterExpiry)),
    email: value.slice(afterExpiry + 1),
  };
}

/**
 * One Redis round trip and one command: GETEX reads the session and slides its idle timeout. The
 * absolute lifetime is checked here; the one request that finds a session past it deletes the key
 * in a second round trip, since the slide would otherwise keep it for as long as a stale cookie
 * kept coming.
 *
 * GETEX is a write, so only a primary answers it: after a failover the old primary refuses it with
 * READONLY and the client sends it again to the new one, whose answer decides whether the session
 * exists, never a read that an old primary, behind, answered.
 *
 * A session a release before wrote is a hash (GETEX refuses it, WRONGTYPE), read as those releases
 * read it until it ends: within the absolute lifetime of its sign-in.
 */
export async function resolveSession(handle: SessionHandle, now = Date.now()): Promise<Principal> {
  const key = sessionKey(handle);
  let value: string | null;
  try {
    value = await redis().getex(key, 'PX', settings().idleMs);
  } catch (error) {
    if (error instanceof Error && error.message.startsWith('WRONGTYPE')) return resolveHashSession(key, now);
    throw error;
  }
  if (value === null) throw new UnauthenticatedError('Session expired or unknown');
  const session = parseSessionValue(value);
  // Fails closed: an expiry that is not a number, or a value no release writes, ends the session too.
  if (!(session && session.expiresAt > now)) return endSession(key);
  return { userId: session.userId, role: session.role, email: session.email };
}

/** The fields of a session hash, as releases before the string wrote it, in the order HMGET answers them. */
const PRINCIPAL_FIELDS = ['uid', 'role', 'email', 'exp'] as const;

/**
 * A session a release before the string wrote, read as they read it: its fields and the slide
 * written together, one round trip after GETEX's refusal. PEXPIRE's answer decides whether the
 * session exists, for the reason GETEX's does: HMGET, a read, may have been answered by an old
 * primary. A session the primary holds but the read missed is a retry-safe 503, not a sign-out.
 */
async function resolveHashSession(key: string, now: number): Promise<Principal> {
  const client = redis();
  const [[userId, role, email, expiresAt], held] = await Promise.all([client.hmget(key, ...PRINCIPAL_FIELDS), client.pexpire(key, settings().idleMs)]);
  if (held === 0) throw new UnauthenticatedError('Session expired or unknown');
  if (!userId) throw new UnavailableError('Sessions are unavailable, try again shortly');
  if (!(Number(expiresAt) > now)) return endSession(key);
  return { userId: Number(userId), role: role as Role, email: email! };
}

async function endSession(key: string): Promise<never> {
  await redis()
    .del(key)
    .catch((error: Error) => logger.warn('A session past its lifetime was not deleted', { error: error.message }));
  throw new UnauthenticatedError('Session expired or unknown');
}

export async function destroySession(handle: SessionHandle): Promise<void> {
  await destroyScript.run(redis(), [sessionKey(handle), indexKey(handle.userId)], [handle.sessionId]);
}

export async function destroyAllSessions(userId: number): Promise<number> {
  return Number(await destroyAllScript.run(redis(), [indexKey(userId)], [sessionKeyPrefix(userId)]));
}
