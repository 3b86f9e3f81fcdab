import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

export type ApiResult = APIGatewayProxyStructuredResultV2;

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };

export function json(statusCode: number, body: unknown, extra: { cookies?: string[]; headers?: Record<string, string> } = {}): ApiResult {
  return jsonBody(statusCode, JSON.stringify(body), extra);
}

/** A response whose JSON body is already serialised, e.g. a cached one. */
export function jsonBody(statusCode: number, body: string, extra: { cookies?: string[]; headers?: Record<string, string> } = {}): ApiResult {
  return {
    statusCode,
    headers: { ...JSON_HEADERS, ...extra.headers },
    body,
    ...(extra.cookies ? { cookies: extra.cookies } : {}),
  };
}

export function noContent(extra: { cookies?: string[] } = {}): ApiResult {
  return { statusCode: 204, headers: { 'cache-control': 'no-store' }, ...(extra.cookies ? { cookies: extra.cookies } : {}) };
}
