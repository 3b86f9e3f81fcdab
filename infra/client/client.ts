/**
 * The typed client of Surge's API: openapi-fetch over the types generated from the OpenAPI
 * document (generated/api-types.ts, `npm run client`), so a call names a route of the document, its
 * parameters and body are checked by tsc, and its answer is typed by status: `data` the success
 * body, `error` the bodies of the route's declared errors, `response` the Response itself.
 * The operators' tools and the tests call the API through it (docs/api.md, "Typed client").
 */
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './generated/api-types';

export type SurgeClient = Client<paths>;

export interface SurgeClientOptions {
  /** The session cookie (`name=value`) sent with every call, as a browser would. */
  cookie?: string;
  /** How long a call may take before it is aborted; 15 s unless told. */
  timeoutMs?: number;
}

/** A client of the API at `base` (e.g. http://localhost:3000), signed in when given a session cookie. */
export function surgeClient(base: string, options: SurgeClientOptions = {}): SurgeClient {
  const timeoutMs = options.timeoutMs ?? 15_000;
  return createClient<paths>({
    baseUrl: base,
    ...(options.cookie ? { headers: { cookie: options.cookie } } : {}),
    // Surge's lists in a query are comma-joined (`types=course,workshop`: style form, explode false in the document);
    // openapi-fetch repeats the name unless told.
    querySerializer: { array: { style: 'form', explode: false } },
    fetch: (request) => fetch(request, { signal: AbortSignal.any([request.signal, AbortSignal.timeout(timeoutMs)]) }),
  });
}

/** The session an answer set (sign-in, sign-up): its first Set-Cookie's name=value. */
export function sessionCookie(response: Response): string | undefined {
  return response.headers.getSetCookie()[0]?.split(';')[0];
}

/** A client signed in with these credentials; throws unless sign-in answers 201 with a session. */
export async function signedIn(
  base: string,
  credentials: { email: string; password: string },
  options: Omit<SurgeClientOptions, 'cookie'> = {},
): Promise<{ client: SurgeClient; cookie: string }> {
  // Only the two fields: sign-in refuses any other (an account record passed as it is).
  const { data, error, response } = await surgeClient(base, options).POST('/sessions', { body: { email: credentials.email, password: credentials.password } });
  const cookie = sessionCookie(response);
  if (!data || !cookie) throw new Error(`sign-in of ${credentials.email} answered ${response.status} ${JSON.stringify(error)}`);
  return { client: surgeClient(base, { ...options, cookie }), cookie };
}

/** What openapi-fetch answers, whatever the route. */
interface Answer {
  data?: unknown;
  error?: unknown;
  response: Response;
}

/** Throws, with what was answered, unless the answer has this status: for tools that report why a step failed. */
export function expectStatus<A extends Answer>(answer: A, status: number): A {
  if (answer.response.status !== status)
    throw new Error(`${answer.response.url} answered ${answer.response.status} ${JSON.stringify(answer.error ?? answer.data)?.slice(0, 300)}`);
  return answer;
}

/** The success body of an answer that must have this status (see expectStatus). */
export function expectData<A extends Answer>(answer: A, status: number): NonNullable<A['data']> {
  const { data } = expectStatus(answer, status);
  if (data === undefined || data === null) throw new Error(`${answer.response.url} answered ${status} without a body`);
  return data as NonNullable<A['data']>;
}
