// Preloaded into every node process and worker thread of a twin the bench starts (NODE_OPTIONS
// --require; Node 20 refuses --cpu-prof there): samples the thread's CPU from its start and, as it
// exits, writes the V8 profile to $SURGE_PROFILE_DIR/profile.<pid>.<thread>.cpuprofile, which
// load/support/cpu-profile.ts reads. The in-thread inspector session answers synchronously, so
// the profile is written within the 'exit' event.
const inspector = require('node:inspector');
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { threadId } = require('node:worker_threads');

const dir = process.env.SURGE_PROFILE_DIR;
const intervalUs = Number(process.env.SURGE_PROFILE_INTERVAL_US);
if (dir) {
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
}
