/** One answer of Surge's HTTP API, as the tests and the smoke run read it. */
export interface ApiAnswer {
  status: number;
  /** Parsed JSON, the text when it is not JSON, undefined when empty. */
  body: any;
  /** The first Set-Cookie's name=value, e.g. a new session. */
  cookie?: string;
}

export interface ApiCallOptions {
  cookie?: string;
  body?: unknown;
  headers?: Record<string, string>;
  timeoutMs?: number;
}

/** Calls the API at `base` as a browser or client would: JSON in, JSON out, the session in a cookie. */
export async function apiCall(base: string, method: string, path: string, options: ApiCallOptions = {}): Promise<ApiAnswer> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(options.cookie ? { cookie: options.cookie } : {}),
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...options.headers,
    },
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
  });
  const text = await res.text();
  let body: unknown = text || undefined;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // Not JSON: kept as text.
  }
  const cookie = res.headers.getSetCookie()[0]?.split(';')[0];
  return { status: res.status, body, ...(cookie ? { cookie } : {}) };
}
