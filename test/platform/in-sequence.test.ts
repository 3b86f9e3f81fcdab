import middy, { type MiddlewareObj } from '@middy/core';
import { describe, expect, it } from 'vitest';
import { inSequence } from '../../shared/platform/function-stack';

/** A before that notes its name when it starts and, after a turn of the event loop if it is slow, when it ends. */
const step = (seen: string[], name: string, slow = false): MiddlewareObj => ({
  before: slow
    ? async () => {
        seen.push(`${name} starts`);
        await new Promise((resolve) => setImmediate(resolve));
        seen.push(`${name} ends`);
      }
    : () => void seen.push(name),
});

const run = (middleware: MiddlewareObj, seen: string[]) =>
  middy(async () => {
    seen.push('handler');
    return 'answered';
  })
    .use(middleware)
    .use({ onError: (request) => void (request.response = `failed: ${(request.error as Error).message}`) })({}, {
    getRemainingTimeInMillis: () => 1_000,
  } as never);

describe('befores run in sequence', () => {
  it('run in order, each after the promise of the one before, and the handler after the last', async () => {
    // Prepare
    const seen: string[] = [];

    // Act
    const answer = await run(inSequence('steps', [step(seen, 'a'), step(seen, 'b', true), step(seen, 'c'), step(seen, 'd', true)]), seen);

    // Assess
    expect(answer).toBe('answered');
    expect(seen).toEqual(['a', 'b starts', 'b ends', 'c', 'd starts', 'd ends', 'handler']);
  });

  it('stop at one that throws or rejects: the rest and the handler never run, the stack sees the error', async () => {
    // Prepare
    const seen: string[] = [];
    const throws: MiddlewareObj = {
      before: () => {
        throw new Error('refused');
      },
    };
    const rejects: MiddlewareObj = {
      before: async () => {
        await Promise.resolve();
        throw new Error('away');
      },
    };

    // Act
    const thrown = await run(inSequence('steps', [step(seen, 'a'), throws, step(seen, 'never')]), seen);
    const rejected = await run(inSequence('steps', [step(seen, 'b', true), rejects, step(seen, 'never')]), seen);

    // Assess
    expect([thrown, rejected]).toEqual(['failed: refused', 'failed: away']);
    expect(seen).toEqual(['a', 'b starts', 'b ends']);
  });

  it('take no middleware that acts after the handler or on an error', () => {
    expect(() => inSequence('steps', [{ before: () => undefined, after: () => undefined }])).toThrow(/only befores/);
  });
});
