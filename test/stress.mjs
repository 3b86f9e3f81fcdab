/**
 * `npm run test:stress [-- <npm script> …]`: runs npm scripts (by default `test`, the README's test
 * command) one after another while one busy loop per core runs beside them, as on a machine of
 * this kind that is four times slower than the fastest or busy with other work. A test that
 * passes here waits on conditions, not on the machine's speed. Prints each script's duration;
 * exits non-zero when one fails. The busy loops end with this process, however it ends.
 */
import { spawn, spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

const scripts = process.argv.slice(2).length ? process.argv.slice(2) : ['test'];
const hogs = Array.from({ length: availableParallelism() }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
const stopHogs = () => hogs.forEach((hog) => hog.kill('SIGKILL'));
process.on('exit', stopHogs);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));

const results = [];
for (const script of scripts) {
  process.stderr.write(`test:stress: npm run ${script}, beside ${hogs.length} busy loops\n`);
  const started = Date.now();
  const { status, signal } = spawnSync('npm', ['run', script], { stdio: 'inherit' });
  results.push({ script, ok: status === 0, seconds: Math.round((Date.now() - started) / 1000), ...(status === 0 ? {} : { exit: signal ?? status }) });
}
// The busy loops' handles would keep this process, and them, alive after the last script: end both here.
stopHogs();
for (const r of results) process.stderr.write(`test:stress: npm run ${r.script}: ${r.ok ? 'passed' : `FAILED (${r.exit})`} in ${r.seconds} s\n`);
process.exit(results.every((r) => r.ok) ? 0 : 1);
