import type { AppError } from '../errors';

/**
 * The negative return codes of the Lua scripts, one meaning each across every capability, so a
 * reply means the same whichever script gave it. Each capability declares its own in its codes.ts
 * and registers them here; a script's header lists the codes it returns (`-11 sold out …`), and
 * test/platform/script-codes.test.ts holds each header to what is registered.
 */
interface Registered {
  owner: string;
  /** The error a refusal answers with; none for a signal, which its caller acts on itself (it carries data or asks for another step). */
  error?: () => AppError;
}

const registered = new Map<number, Registered>();

export interface ScriptCodes {
  /** Codes that refuse the request as it is: the client sees the error. */
  refusals?: Readonly<Record<number, () => AppError>>;
  /** Codes the caller acts on itself. */
  signals?: readonly number[];
}

/** Registers a capability's codes under its name: a code another capability has registered throws. */
export function registerScriptCodes(owner: string, { refusals = {}, signals = [] }: ScriptCodes): void {
  const codes: [number, Registered][] = [
    ...Object.entries(refusals).map(([code, error]): [number, Registered] => [Number(code), { owner, error }]),
    ...signals.map((code): [number, Registered] => [code, { owner }]),
  ];
  for (const [code, entry] of codes) {
    if (!(code < 0)) throw new Error(`${owner}: a script code is negative, not ${code}`);
    const known = registered.get(code);
    if (known && known.owner !== owner) throw new Error(`The script code ${code} is ${known.owner}'s; ${owner} cannot register it`);
    registered.set(code, entry);
  }
}

/** A reply that is a registered refusal: the caller throws its error (scriptError). */
export function isRefusal(reply: unknown): reply is number {
  return typeof reply === 'number' && registered.get(reply)?.error !== undefined;
}

export function scriptError(code: number): AppError {
  const error = registered.get(code)?.error;
  if (!error) throw new Error(`The script code ${code} is not a registered refusal`);
  return error();
}

/** Every code registered so far, with its owner. */
export const registeredScriptCodes = (): ReadonlyMap<number, { owner: string; refusal: boolean }> =>
  new Map([...registered].map(([code, { owner, error }]) => [code, { owner, refusal: error !== undefined }]));
