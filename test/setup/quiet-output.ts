/**
 * The suite's output is for its verdicts. Handlers run in the test process print one EMF line per
 * invocation that counted something (shared/metrics.ts), thousands in a run, burying the failures;
 * they are dropped here before they reach the terminal. A test that asserts on metrics still sees
 * every line through onStdoutLine (infra/local/emf.ts), which taps stdout above this filter: setup
 * files run before a test file imports anything.
 */
const EMF_LINE = /^\{"_aws":/;
const FILTERED = Symbol.for('surge.quietOutput');

type Write = (chunk: unknown, ...rest: unknown[]) => boolean;

if (!(FILTERED in process.stdout)) {
  const write = process.stdout.write.bind(process.stdout) as Write;
  process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (typeof chunk !== 'string' && !(chunk instanceof Uint8Array)) return write(chunk, ...rest);
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
    const kept = text
      .split('\n')
      .filter((line) => !EMF_LINE.test(line))
      .join('\n');
    if (kept.trim() !== '') return write(kept, ...rest);
    // Nothing left to write: still tell a caller waiting for the write that it is done.
    const callback = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
    callback?.();
    return true;
  }) as typeof process.stdout.write;
  Object.defineProperty(process.stdout, FILTERED, { value: true });
}
