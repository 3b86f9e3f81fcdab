import { describe, expect, it } from 'vitest';
import { ConfigError, databaseEnv, readEnv, sessionEnv } from '../../shared/platform/config';

describe('readEnv', () => {
  it('names the missing variable', () => {
    expect(() => readEnv(databaseEnv, {})).toThrowError(ConfigError);
    expect(() => readEnv(databaseEnv, {})).toThrowError(/DATABASE_URL/);
  });

  it('names an invalid variable', () => {
    expect(() => readEnv(databaseEnv, { DATABASE_URL: 'postgres://x/y' })).toThrowError(/DATABASE_URL/);
    expect(() => readEnv(sessionEnv, { COOKIE_SECURE: 'yes' })).toThrowError(/COOKIE_SECURE/);
  });

  it('applies defaults', () => {
    expect(readEnv(sessionEnv, {})).toEqual({ SESSION_IDLE_SECONDS: 1800, SESSION_ABSOLUTE_SECONDS: 43200, COOKIE_SECURE: true });
  });
});
