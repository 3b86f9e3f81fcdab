/**
 * The suite's output is for its verdicts. Handlers run in the test process print EMF lines (at most
 * one per 5 s, more with urgent counts: shared/platform/metrics.ts), hundreds in a run, and every synth of
 * the stack prints a progress line per bundled function; both bury the failures, so they are
 * dropped here before they reach the terminal. A test that asserts on metrics still sees every
 * EMF line through onStdoutLine (infra/twin/lambda/emf.ts), which taps stdout above this filter: setup
 * files run before a test file imports anything.
 */
const FILTERED = Symbol.for('surge.quietOutput');

type Write = (chunk: unknown, ...rest: unknown[]) => boolean;

/** Drops the lines of `stream` that `unwanted` matches; writes the rest as before. */
function dropLines(stream: NodeJS.WriteStream, unwanted: RegExp): void {
  if (FILTERED in stream) return;
  const write = stream.write.bind(stream) as Write;
  stream.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (typeof chunk !== 'string' && !(chunk instanceof Uint8Array)) return write(chunk, ...rest);
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
    const kept = text
      .split('\n')
      .filter((line) => !unwanted.test(line))
      .join('\n');
    if (kept.trim() !== '') return write(kept, ...rest);
    // Nothing left to write: still tell a caller waiting for the write that it is done.
    const callback = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
    callback?.();
    return true;
  }) as typeof stream.write;
  Object.defineProperty(stream, FILTERED, { value: true });
}

dropLines(process.stdout, /^\{"_aws":/);
// aws-cdk-lib's asset staging announces each bundle it builds.
dropLines(process.stderr, /^Bundling asset /);
