/**
 * A CloudFront Function (cloudfront-js-2.0) of the template, run on a viewer request as CloudFront
 * runs it: its handler is given the request in CloudFront's event shape, and what it returns is
 * the request CloudFront goes on with (or, with a statusCode, the answer it gives instead).
 */
import { Script, createContext } from 'node:vm';

type Values = Record<string, { value: string }>;

export interface ViewerRequest {
  method: string;
  uri: string;
  querystring: Values;
  headers: Values;
  cookies: Values;
}

export interface ViewerAnswer {
  statusCode: number;
  statusDescription?: string;
  headers?: Values;
}

export type ViewerFunction = (request: ViewerRequest, viewerIp: string) => ViewerRequest | ViewerAnswer;

/** Compiles a function's code once, in a context of its own (it sees none of the twin's globals). */
export function viewerFunction(code: string): ViewerFunction {
  const handler = new Script(`${code}\n;handler`).runInContext(createContext({})) as (event: unknown) => ViewerRequest | ViewerAnswer;
  return (request, viewerIp) => handler({ version: '1.0', context: { eventType: 'viewer-request' }, viewer: { ip: viewerIp }, request });
}
