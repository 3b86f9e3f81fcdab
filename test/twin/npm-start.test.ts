import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { runningAfter, watchProcessTree } from '../support/process-tree';
import { spawnTwinProcess, type StartingTwinProcess, type TwinInfo } from '../../infra/twin/twin-process';
import { until } from '../../shared/platform/wait';

/** What a process manager, `timeout` or a CI job allows between SIGTERM and SIGKILL, and what the twin promises. */
const STOP_WITHIN_MS = 10_000;
/** Starting Redis, MariaDB (installed on the first start) and the emulator on two shared cores. */
const START_TIMEOUT_MS = 180_000;

/**
 * `npm start` as a user, a process manager or a CI job runs it, with services of its own (no
 * REDIS_URL, DATABASE_URL or AWS_ENDPOINT_URL): npm → node main.ts → redis-server, mariadbd, the
 * emulator, the consumers' process, and the processes those start.
 */
describe('npm start', () => {
  const stateDir = `.local/test-npm-start-${randomBytes(4).toString('hex')}`;
  const database = `surge_npm_${randomBytes(4).toString('hex')}`;
  let twin: StartingTwinProcess | undefined;
  let tree: ReturnType<typeof watchProcessTree> | undefined;

  /** npm start, with every process under it recorded from now on. */
  function startThroughNpm(args: string[] = []) {
    twin = spawnTwinProcess({ npm: true, ownServices: true, stateDir, database, args, env: { POWERTOOLS_LOG_LEVEL: 'ERROR' } });
    tree = watchProcessTree(twin.child.pid!);
    return { twin, tree };
  }

  /** Also the processes the twin says it started, should one have left the tree. */
  const recordReported = (info: TwinInfo) => tree!.add([info.pid, ...Object.values(info.pids).filter((pid): pid is number => pid !== undefined)]);

  afterEach(async () => {
    // A failed case leaves nothing running for the next.
    await twin?.stop();
    for (const left of tree?.running() ?? []) {
      try {
        process.kill(left.pid, 'SIGKILL');
      } catch {
        // Gone since it was seen running.
      }
    }
    tree?.stop();
    twin = undefined;
    tree = undefined;
  });
  afterAll(() => rmSync(stateDir, { recursive: true, force: true }));

  it(
    'answers /health with 503 while the twin starts, and 200 once it is ready',
    async () => {
      // Prepare
      const { twin } = startThroughNpm();
      const url = await twin.listening;
      let ready = false;
      void twin.ready.then(() => (ready = true));

      // Act: probe from the moment the gateway listens until the twin says it is ready, then once more
      const answers: { status: number; body: unknown; twinJsonWritten: boolean }[] = [];
      const probe = async () => {
        const res = await fetch(`${url}/health`);
        const body = await res.json();
        // main.ts writes twin.json in the same turn as the gateway starts serving, so a 200 without it came too early.
        answers.push({ status: res.status, body, twinJsonWritten: existsSync(join(stateDir, 'twin.json')) });
      };
      await until(
        async () => {
          await probe();
          return ready;
        },
        START_TIMEOUT_MS,
        'the twin ready',
      );
      await probe();

      // Assess: 503 while starting, 200 only once ready
      expect(answers[0]).toEqual({ status: 503, body: { error: { code: 'UNAVAILABLE', message: 'The twin is starting' } }, twinJsonWritten: false });
      for (const answer of answers) {
        if (answer.status === 200) expect(answer.twinJsonWritten).toBe(true);
        else expect(answer).toMatchObject({ status: 503, body: { error: { code: 'UNAVAILABLE', message: 'The twin is starting' } } });
      }
      expect(answers.at(-1)).toMatchObject({ status: 200, body: { status: 'ok', down: [] } });
    },
    START_TIMEOUT_MS,
  );

  it(
    'keeps its stores’ data from one start to the next, and starts afresh with --fresh',
    async () => {
      // Prepare: an account made on one start.
      const email = `kept-${randomBytes(3).toString('hex')}@surge.test`;
      const credentials = { email, password: 'a passphrase kept' };
      const first = startThroughNpm().twin;
      const made = await fetch(`${(await first.ready).url}/users`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(credentials),
      });
      await first.stop();
      const signIn = async (url: string) =>
        (await fetch(`${url}/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(credentials) })).status;

      // Act
      const second = startThroughNpm().twin;
      const kept = await signIn((await second.ready).url);
      await second.stop();
      const third = startThroughNpm(['--fresh']).twin;
      const afresh = await signIn((await third.ready).url);

      // Assess
      expect(made.status).toBe(201);
      expect(kept).toBe(201);
      expect(afresh).toBe(401);
    },
    3 * START_TIMEOUT_MS,
  );

  it(
    'stops every process it started within 10 s of a SIGTERM to npm alone',
    async () => {
      // Prepare
      const { twin, tree } = startThroughNpm();
      recordReported(await twin.ready);
      tree.sample();

      // Act
      process.kill(twin.child.pid!, 'SIGTERM');
      const left = await runningAfter(tree, STOP_WITHIN_MS);

      // Assess: npm, node on main.ts, redis-server, mariadbd, the emulator, the consumers and what they started
      const started = [
        /^npm start/,
        /infra\/twin\/main\.ts/,
        /^redis-server/,
        /^mariadbd/,
        /infra\/twin\/services\/emulator\.ts/,
        /infra\/twin\/consumers\.ts/,
      ];
      expect(tree.seen().map((p) => p.command)).toEqual(expect.arrayContaining(started.map((command) => expect.stringMatching(command))));
      expect(left).toEqual([]);
    },
    START_TIMEOUT_MS,
  );

  it(
    'stops what has started within 10 s of a SIGTERM to npm while the twin is still starting',
    async () => {
      // Prepare: the signal comes once redis-server runs, before the twin is ready
      const { twin, tree } = startThroughNpm();
      await until(async () => tree.running().some((p) => p.command.startsWith('redis-server')), 60_000, 'redis-server running');

      // Act
      process.kill(twin.child.pid!, 'SIGTERM');
      const left = await runningAfter(tree, STOP_WITHIN_MS);

      // Assess
      await expect(twin.ready).rejects.toThrow(/exited/);
      expect(left).toEqual([]);
    },
    START_TIMEOUT_MS,
  );

  it(
    "stops everything within 10 s of a SIGTERM to the twin's own process, and npm exits with it",
    async () => {
      // Prepare
      const { twin, tree } = startThroughNpm();
      const info = await twin.ready;
      recordReported(info);
      tree.sample();

      // Act
      process.kill(info.pid, 'SIGTERM');
      const left = await runningAfter(tree, STOP_WITHIN_MS);

      // Assess
      expect(left).toEqual([]);
      expect(await twin.exited).toEqual({ code: 0, signal: null });
    },
    START_TIMEOUT_MS,
  );

  it(
    'with --aws-stores, where the twin runs in a second node process, stops everything within 10 s of a SIGTERM to npm',
    async () => {
      // Prepare
      const { twin, tree } = startThroughNpm(['--aws-stores']);
      const info = await twin.ready;
      recordReported(info);
      tree.sample();

      // Act
      process.kill(twin.child.pid!, 'SIGTERM');
      const left = await runningAfter(tree, STOP_WITHIN_MS);

      // Assess: both node processes on main.ts, the one that trusts the CA being the twin
      // (At least two: on a loaded machine a sample can also catch the shell npm runs before it execs node.)
      const twins = tree.seen().filter((p) => p.command.includes('infra/twin/main.ts'));
      expect(twins.filter((p) => p.command.startsWith(process.execPath) || p.command.startsWith('node ')).length, JSON.stringify(twins)).toBeGreaterThanOrEqual(
        2,
      );
      expect(left).toEqual([]);
    },
    START_TIMEOUT_MS,
  );
});
