// Preloaded into every node process and worker thread of a twin the bench starts (NODE_OPTIONS
// --require of the small file profilingEnv writes, which calls this with the profile directory:
// a bundle's worker thread gets only its function's environment, so the directory cannot travel
// in one; Node 20 refuses --cpu-prof in NODE_OPTIONS). Samples the thread's CPU from its start
// and, as it exits, writes the V8 profile to <dir>/profile.<pid>.<thread>.cpuprofile, which
// load/support/cpu-profile.ts reads. The in-thread inspector session answers synchronously, so
// the profile is written within the 'exit' event.
//
// A worker thread that is terminated (the mail function's parser threads, stopped with
// worker.terminate() or with their process) may never see 'exit', so a worker also writes what it has
// sampled every flushMs, as profile.<pid>.<thread>-<n>.cpuprofile, and starts sampling again:
// such a thread loses at most its last flushMs, and a bench waits for each thread's flush after
// its last window before it stops the twin (cpu-profile.ts, workerProfilesFlushed).
const inspector = require('node:inspector');
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { isMainThread, threadId } = require('node:worker_threads');

module.exports = function startProfiling(dir, intervalUs, flushMs) {
  const session = new inspector.Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: intervalUs });
  session.post('Profiler.start');
  const write = (name) =>
    session.post('Profiler.stop', (error, result) => {
      if (!error) writeFileSync(join(dir, `profile.${process.pid}.${name}.cpuprofile`), JSON.stringify(result.profile));
    });
  if (!isMainThread) {
    let flushes = 0;
    setInterval(() => {
      write(`${threadId}-${++flushes}`);
      session.post('Profiler.start');
    }, flushMs).unref();
  }
  process.on('exit', () => write(threadId));
};
