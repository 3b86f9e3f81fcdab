import type { MiddlewareObj } from '@middy/core';
import { UnavailableError } from '../errors';
import { logger } from '../logger';
import { once } from '../once';
import { awsClientOptions } from './aws';
import { createSecretReader } from './secrets';

/**
 * The credentials of a function's data stores live in Secrets Manager, never in its configuration:
 * the environment names the secrets (DATABASE_SECRET_ID, REDIS_AUTH_SECRET_ID), each function
 * looks them up once per instance, before its first invocation uses a client, and again when a
 * store refuses them (the secret rotated). The deploy trigger's FIRST_ADMIN_SECRET_ID, the first
 * admin's credentials, and the API's ORIGIN_SECRET_ID, CloudFront's origin header, are looked up the same way.
 */

const readSecret = once(() => createSecretReader(awsClientOptions()));
const loaded = new Map<string, string>();
const lookups = new Map<string, Promise<string>>();

/** Looks a secret up, sharing one request among concurrent callers; fresh skips what was loaded. */
function lookUp(secretId: string, fresh: boolean): Promise<string> {
  const known = loaded.get(secretId);
  if (!fresh && known !== undefined) return Promise.resolve(known);
  let lookup = lookups.get(secretId);
  if (!lookup) {
    lookup = readSecret()(secretId).then(
      (value) => {
        loaded.set(secretId, value);
        lookups.delete(secretId);
        return value;
      },
      (error: unknown) => {
        lookups.delete(secretId);
        throw error;
      },
    );
    lookups.set(secretId, lookup);
  }
  return lookup;
}

/** A secret looked up before this instance's first invocation; asking for one that was not is a bug. */
export function loadedSecret(secretId: string): string {
  const value = loaded.get(secretId);
  if (value === undefined) throw new Error(`Secret ${secretId} was used before it was looked up; the function's stack must load store credentials first`);
  return value;
}

/** A store that keeps refusing (misconfigured rather than rotated) costs at most one lookup this often. */
const REFRESH_INTERVAL_MS = 10_000;
const refreshedAt = new Map<string, number>();

/** Looks the secret up again after a store refused what it held, at most once per interval. */
export function refreshSecret(secretId: string): Promise<string> {
  const last = refreshedAt.get(secretId) ?? 0;
  if (Date.now() - last < REFRESH_INTERVAL_MS) return lookUp(secretId, false);
  refreshedAt.set(secretId, Date.now());
  return lookUp(secretId, true);
}

/** A JSON secret's fields; JSON.parse quotes what it could not read, so its error must not reach a log line. */
function secretFields(secret: string, what: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(secret);
    if (parsed && typeof parsed === 'object') return parsed as Record<string, unknown>;
  } catch {
    // Falls through to the error below, which names the secret, never its value.
  }
  throw new Error(`The ${what} secret is not a JSON object`);
}

/** The user and password in an RDS secret (JSON, as RDS and the stack generate it). */
export function databaseCredentials(secret: string): { user: string; password: string } {
  const { username, password } = secretFields(secret, 'database');
  if (typeof username !== 'string' || typeof password !== 'string') throw new Error('The database secret has no username and password');
  return { user: username, password };
}

/** The address and password in the first admin's secret (JSON, as the stack generates it). */
export function firstAdminCredentials(secret: string): { email: string; password: string } {
  const { email, password } = secretFields(secret, "first admin's");
  if (typeof email !== 'string' || typeof password !== 'string' || !password) throw new Error("The first admin's secret has no email and password");
  return { email, password };
}

/**
 * Middleware first in every function's stack: the store secrets its environment names are looked
 * up before the handler runs, once per instance. Secrets Manager being away is a retry-safe 503
 * (or a failed invocation the trigger retries), never a half-done request.
 */
export function storeCredentials(): MiddlewareObj {
  // Read at the stack's first invocation, not at import (an entry imports without an environment)
  // and not on every invocation: an instance's environment never changes, and four reads of
  // process.env were the API's most expensive middleware per request on Node 20.
  let named: string[] | undefined;
  let allLoaded = false;
  const lookUpNamed = async () => {
    named ??= [process.env.DATABASE_SECRET_ID, process.env.REDIS_AUTH_SECRET_ID, process.env.FIRST_ADMIN_SECRET_ID, process.env.ORIGIN_SECRET_ID].filter(
      (id): id is string => id !== undefined && id !== '',
    );
    const ids = named.filter((id) => !loaded.has(id));
    if (!ids.length) {
      allLoaded = true;
      return;
    }
    try {
      await Promise.all(ids.map((id) => lookUp(id, false)));
    } catch (error) {
      logger.error('Store credentials could not be looked up', { error: error as Error });
      throw new UnavailableError('Try again shortly');
    }
  };
  return {
    name: 'storeCredentials',
    // Once all are loaded, no promise at all: every invocation after the first passes straight on.
    before: () => (allLoaded ? undefined : lookUpNamed()),
  };
}
