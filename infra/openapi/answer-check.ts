/**
 * Holds an answer to the OpenAPI document: its status declared for the route, its content type
 * one the status declares (or no body where none is), its body valid against that schema, and
 * Retry-After present where the document requires it. The tests' gateway and their direct calls
 * of route handlers go through it (docs/api.md, "The contract under test").
 *
 * Ajv validates the schemas (JSON Schema 2020-12, OpenAPI 3.1's dialect); the OpenAPI response
 * validators on npm stop at 3.0 or at JSON bodies, so finding the operation's answer, the media
 * type and the header is written here.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

/** An answer as it leaves the gateway: status, headers by lower-case name, body text (undefined: none). */
export interface HttpAnswer {
  status: number;
  headers: Record<string, string>;
  body: string | undefined;
}

interface ResponseObject {
  headers?: Record<string, { required?: boolean }>;
  content?: Record<string, { schema?: unknown }>;
}

interface OpenApi {
  paths: Record<string, Record<string, { responses: Record<string, ResponseObject> }>>;
}

/** ajv-formats is CommonJS with a default export: Node's ESM sees the module object. */
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as typeof addFormatsModule;

const DOCUMENT_ID = 'surge-openapi';

/** JSON Pointer escaping of one segment, then URI escaping: a path holds '/', '{' and '}'. */
const pointerSegment = (segment: string) => encodeURIComponent(segment.replace(/~/g, '~0').replace(/\//g, '~1'));

/**
 * A check of answers against the document: for a route (its method and API Gateway path, e.g.
 * `GET /items/{itemId}`), the ways an answer breaks the contract, none when it keeps it; undefined
 * for a route the document does not describe (the twin's own, a test's extra function).
 */
export type AnswerCheck = (method: string, path: string, answer: HttpAnswer) => string[] | undefined;

export function answerChecker(openApi: object): AnswerCheck {
  const document = openApi as OpenApi;
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  // The whole document is one schema resource, so each body schema's $refs to #/components resolve within it.
  ajv.addSchema(openApi, DOCUMENT_ID);
  const validators = new Map<string, ValidateFunction>();
  const validatorOf = (pointer: string) => {
    let validate = validators.get(pointer);
    if (!validate) {
      validate = ajv.compile({ $ref: `${DOCUMENT_ID}#${pointer}` });
      validators.set(pointer, validate);
    }
    return validate;
  };

  return (method, path, answer) => {
    const operation = document.paths[path]?.[method.toLowerCase()];
    if (!operation) return undefined;
    const route = `${method} ${path} answered ${answer.status}`;
    const response = operation.responses[String(answer.status)];
    if (!response) return [`${route}, a status the document does not declare for it (${Object.keys(operation.responses).join(', ')})`];

    const problems: string[] = [];
    for (const [name, header] of Object.entries(response.headers ?? {})) {
      const value = answer.headers[name.toLowerCase()];
      if (header.required && value === undefined) problems.push(`${route} without its ${name} header`);
      if (value !== undefined && name.toLowerCase() === 'retry-after' && !/^[1-9]\d*$/.test(value))
        problems.push(`${route} with ${name}: ${value}, not whole seconds`);
    }

    const hasBody = answer.body !== undefined && answer.body !== '';
    const media = (answer.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (!response.content) {
      if (hasBody) problems.push(`${route} with a body, where the document declares none`);
      return problems;
    }
    const declared = response.content[media];
    if (!declared) return [...problems, `${route} as ${media || 'no content type'}, not ${Object.keys(response.content).join(' or ')}`];
    let body: unknown = answer.body ?? '';
    if (media.endsWith('json')) {
      try {
        body = JSON.parse(answer.body ?? '');
      } catch {
        return [...problems, `${route} with a body that is not JSON: ${(answer.body ?? '').slice(0, 80)}`];
      }
    }
    const validate = validatorOf(`/paths/${pointerSegment(path)}/${method.toLowerCase()}/responses/${answer.status}/content/${pointerSegment(media)}/schema`);
    if (!validate(body)) {
      const errors = (validate.errors ?? []).map((error) => `${error.instancePath || '(body)'} ${error.message ?? 'is invalid'}`);
      problems.push(`${route} with a body outside its schema: ${errors.join('; ')}; body ${JSON.stringify(body).slice(0, 200)}`);
    }
    return problems;
  };
}
