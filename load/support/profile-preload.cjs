// Preloaded into every node process and worker thread of a twin the bench starts (NODE_OPTIONS
// --require of the small file profilingEnv writes, which calls this with the profile directory:
// a bundle's worker thread gets only its function's environment, so the directory cannot travel
// in one; Node 20 refuses --cpu-prof in NODE_OPTIONS). Samples the thread's CPU from its start
// and, as it exits, writes the V8 profile to <dir>/profile.<pid>.<thread>.cpuprofile, which
// load/support/cpu-profile.ts reads. The in-thread inspector session answers synchronously, so
// the profile is written within the 'exit' event.
const inspector = require('node:inspector');
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { threadId } = require('node:worker_threads');

module.exports = function startProfiling(dir, intervalUs) {
  const session = new inspector.Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: intervalUs });
  session.post('Profiler.start');
  process.on('exit', () => {
    session.post('Profiler.stop', (error, result) => {
      if (!error) writeFileSync(join(dir, `profile.${process.pid}.${threadId}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
};
