import { AppError, UnauthenticatedError } from '../errors';

/** Negative return codes of every Lua script, each mapped below to the error a client sees. */
export enum ScriptCode {
  SessionNotFound = -1,
}

const errorFor: Record<ScriptCode, () => AppError> = {
  [ScriptCode.SessionNotFound]: () => new UnauthenticatedError('Session expired or unknown'),
};

export function isScriptCode(reply: unknown): reply is ScriptCode {
  return typeof reply === 'number' && reply < 0 && reply in errorFor;
}

export function scriptError(code: ScriptCode): AppError {
  return errorFor[code]();
}
