import { Logger } from '@aws-lambda-powertools/logger';

export const logger = new Logger({ serviceName: 'surge' });

/**
 * An error as a log line may carry it: name, message and stack only. An ioredis error also holds
 * its command, whose arguments can be an AUTH token, a lease token, a cached page or a buyer's data.
 */
export function loggableError(error: unknown): { name?: string; message?: string; stack?: string } {
  const { name, message, stack } = (error ?? {}) as Error;
  return { name, message, stack };
}
