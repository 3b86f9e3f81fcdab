// One Lambda instance of the twin's bundle mode, in a worker thread: imports the function's bundle
// as Lambda's runtime would (its cold start), then runs the invocations the twin posts. The
// thread's environment is exactly what the function's row of the table asks for.
import { randomUUID } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';

const { bundle, functionName, memoryMb, region } = workerData;

// This thread's id, first, so the twin can tell how long the init waited for a core
// (/proc/<pid>/task/<thread>/schedstat); null where there is no /proc, and the init counts the clock.
let thread = null;
try {
  thread = Number(readlinkSync('/proc/thread-self').split('/').pop());
} catch {
  // Not Linux.
}
parentPort.postMessage({ thread });

/** This thread's CPU so far (ms), or undefined without /proc: read here and once imported, so an init's CPU splits into the thread's start and the bundle's import. */
const threadCpuMs = () => {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return undefined;
  }
};
const startedCpuMs = threadCpuMs();
const arn = `arn:aws:lambda:${region}:000000000000:function:${functionName}`;

function contextFor(deadline) {
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: arn,
    memoryLimitInMB: String(memoryMb),
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local-twin',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done() {},
    fail() {},
    succeed() {},
  };
}

let handler;
let importError;
try {
  const mod = await import(bundle);
  if (typeof mod.handler !== 'function') throw new Error(`${bundle} exports no handler`);
  handler = mod.handler;
  const importedCpuMs = threadCpuMs();
  parentPort.postMessage({
    ready: true,
    ...(startedCpuMs !== undefined && importedCpuMs !== undefined ? { startCpuMs: startedCpuMs, importCpuMs: importedCpuMs - startedCpuMs } : {}),
  });
} catch (error) {
  // Lambda's Runtime.ImportModuleError: every invocation of this instance fails with it.
  importError = { name: 'Runtime.ImportModuleError', message: error?.message ?? String(error) };
  parentPort.postMessage({ ready: false, error: importError });
}

// Each reply says how long the handler ran, from the event to its result, as Lambda's REPORT line
// would: timed here, not in the twin's thread, which may be busy when the reply arrives.
parentPort.on('message', ({ id, event, deadline, exit }) => {
  // The twin stops this instance: exiting, not terminated, runs what a thread runs at its exit.
  if (exit) process.exit(0);
  const began = performance.now();
  const took = () => performance.now() - began;
  if (importError) return parentPort.postMessage({ id, ok: false, error: importError, durationMs: took() });
  const failed = (error) =>
    parentPort.postMessage({ id, ok: false, error: { name: error?.name ?? 'Error', message: error?.message ?? String(error) }, durationMs: took() });
  Promise.resolve()
    .then(() => handler(event, contextFor(deadline)))
    // Lambda hands the caller the result as JSON: what does not survive that must not survive here.
    .then((result) => parentPort.postMessage({ id, ok: true, result: result === undefined ? null : JSON.parse(JSON.stringify(result)), durationMs: took() }))
    .catch(failed);
});
