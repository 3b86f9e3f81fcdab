import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

export type ApiResult = APIGatewayProxyStructuredResultV2;

/** Name the body's type and its fields of an Answer; they exist in types only. */
declare const bodyType: unique symbol;
declare const bodyFields: unique symbol;

/**
 * An answer whose type carries its status and its body's type, so a route's handler is held by
 * the compiler to the answers its route declares (shared/api/api.ts): the body must be of the
 * declared type, and name no field at its top the declaration does not (a field a domain object
 * gains does not slip into an answer undeclared). Nothing of it exists at run time: an Answer is
 * a plain ApiResult, and no answer is validated on the request's path.
 */
export type Answer<Status extends number = number, Body = unknown> = ApiResult & {
  statusCode: Status;
  readonly [bodyType]?: Body;
  readonly [bodyFields]?: keyof Body;
};

/** The JSON text of a Body, e.g. a cached page kept serialised: typed as what it holds. */
export type JsonText<Body> = string & { readonly [bodyType]?: Body };

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };

/** What an answer may carry besides its status and body. */
type AnswerExtras = { cookies?: string[]; headers?: Record<string, string> };
const NO_EXTRAS: AnswerExtras = Object.freeze({});

export function json<Status extends number, Body>(statusCode: Status, body: Body, extra: AnswerExtras = NO_EXTRAS): Answer<Status, Body> {
  return jsonBody(statusCode, JSON.stringify(body) as JsonText<Body>, extra);
}

/** A response whose JSON body is already serialised, e.g. a cached one. */
export function jsonBody<Status extends number, Body>(statusCode: Status, body: JsonText<Body>, extra: AnswerExtras = NO_EXTRAS): Answer<Status, Body> {
  // Every answer of every route: no spread of what is not there.
  const answer: Answer<Status, Body> = { statusCode, headers: extra.headers ? { ...JSON_HEADERS, ...extra.headers } : { ...JSON_HEADERS }, body };
  if (extra.cookies) answer.cookies = extra.cookies;
  return answer;
}

export function noContent(extra: { cookies?: string[] } = {}): Answer<204, undefined> {
  return { statusCode: 204, headers: { 'cache-control': 'no-store' }, ...(extra.cookies ? { cookies: extra.cookies } : {}) };
}

/** An HTML page (the docs page): its body's schema is a string, so its type is one. */
export function html<Status extends number>(statusCode: Status, body: string, extra: { headers?: Record<string, string> } = {}): Answer<Status, string> {
  return { statusCode, headers: { 'content-type': 'text/html; charset=utf-8', ...extra.headers }, body };
}

/** A body of another media type than JSON (a feed): its body's schema is a string, so its type is one. */
export function textBody<Status extends number>(
  statusCode: Status,
  body: string,
  contentType: string,
  extra: { headers?: Record<string, string> } = {},
): Answer<Status, string> {
  return { statusCode, headers: { 'content-type': `${contentType}; charset=utf-8`, ...extra.headers }, body };
}

/** 304: the client's copy is current; the validators and caching headers again, no body. */
export function notModified(headers: Record<string, string>): Answer<304, undefined> {
  return { statusCode: 304, headers };
}
