import { randomUUID } from 'node:crypto';

/**
 * What Lambda sends an asynchronously invoked function's on-failure destination once its retries
 * are spent: its invocation record, the event itself as `requestPayload` (AWS Lambda Developer
 * Guide, "Capturing records of Lambda asynchronous invocations").
 */
export interface AsyncFailureRecord {
  version: '1.0';
  timestamp: string;
  requestContext: { requestId: string; functionArn: string; condition: 'RetriesExhausted'; approximateInvokeCount: number };
  requestPayload: unknown;
  responseContext: { statusCode: 200; executedVersion: '$LATEST'; functionError: 'Unhandled' };
  responsePayload: { errorType: string; errorMessage: string };
}

export function asyncFailureRecord(functionArn: string, event: unknown, invocations: number, error: Error): AsyncFailureRecord {
  return {
    version: '1.0',
    timestamp: new Date().toISOString(),
    requestContext: { requestId: randomUUID(), functionArn: `${functionArn}:$LATEST`, condition: 'RetriesExhausted', approximateInvokeCount: invocations },
    requestPayload: event,
    responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
    responsePayload: { errorType: error.name, errorMessage: error.message },
  };
}
