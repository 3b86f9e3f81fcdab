import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { DesignWindow } from '../../load/support/cpu';
import { profilingEnv, readProfiles, splitWindow, workerProfilesFlushed } from '../../load/support/cpu-profile';
import { until } from '../../shared/platform/wait';
import { designCpu, productPerWindow } from '../../load/support/cpu-split';

/**
 * A gateway process's profile of ten samples, 100 µs apart from 1,000,000 µs (fixture): idle; the
 * garbage collector; a function's handler and the Redis client under it (×2); the gateway's
 * emulation writing a response; a Redis reply read with no project frame on the stack; an AWS SDK
 * continuation with none either; fauxqs.
 */
const PROFILES = fileURLToPath(new URL('../events/profiles', import.meta.url));
const PID = 4242;
const ms = (samples: number) => samples / 10;
/** Sums of tenths, compared to the microsecond. */
const rounded = (sides: Record<string, number>) => Object.fromEntries(Object.entries(sides).map(([side, v]) => [side, Math.round(v * 1000) / 1000]));

/** Surge's window over 100 requests and 200 ms of the machine's CPU: the gateway (the profiled process) and Redis, each with its measured CPU in ms. */
const surgeWindow = (cpuMs: { gateway: number; redis: number }, fromUs = 0, toUs = Number.MAX_SAFE_INTEGER): DesignWindow => ({
  design: 'surge',
  fromUs,
  toUs,
  requests: 100,
  processes: { gateway: { pid: PID, cpuMs: cpuMs.gateway }, redis: { pid: 1, cpuMs: cpuMs.redis } },
  machineCpuMs: 200,
});

describe("the bench's CPU split by profile", () => {
  it('puts each sample on the side of its leaf-most project frame, else its package, and leaves Node alone unattributed', () => {
    // Prepare
    const threads = readProfiles(PROFILES);

    // Act
    const whole = splitWindow(threads, PID, 0, Number.MAX_SAFE_INTEGER);

    // Assess: handler ×2, ioredis under it ×2, the reply read, the SDK; the emulation's write and fauxqs
    expect(rounded(whole.ms)).toEqual({ product: ms(6), stand_in: ms(2), unattributed: ms(1), idle: ms(1) });
  });

  it("counts the AWS SDK as the poller's in the consumers' process", () => {
    const threads = readProfiles(PROFILES);

    const consumers = splitWindow(threads, PID, 0, Number.MAX_SAFE_INTEGER, 'consumers');

    expect(rounded(consumers.ms)).toMatchObject({ product: ms(5), stand_in: ms(3) });
  });

  it("takes only a window's samples", () => {
    const threads = readProfiles(PROFILES);

    // The fourth to the seventh sample (1,000,400 µs to 1,000,700 µs): ioredis, the write, the reply, the SDK.
    const window = splitWindow(threads, PID, 1_000_400, 1_000_800);

    expect(rounded(window.ms)).toEqual({ product: ms(3), stand_in: ms(1), unattributed: 0, idle: 0 });
  });

  it("divides a shared process's measured CPU in its samples' proportion, and counts the stores whole", () => {
    // Prepare: 80 ms of the gateway's CPU and 10 of Redis's over 100 requests, in the whole profile
    const threads = readProfiles(PROFILES);
    const window = surgeWindow({ gateway: 80, redis: 10 });

    // Act
    const split = designCpu([window], threads);

    // Assess: 6 of the 8 placed samples are the product's (0.6 ms a request), 2 the emulation's
    expect(split.cpu_ms_per_request).toEqual({ functions: 0.6, gateway_emulation: 0.2, redis: 0.1 });
    expect(split.product_ms_per_request).toBe(0.7);
    expect(split.stand_in_ms_per_request).toBe(0.2);
    expect(split.unattributed_share).toBe(0.111);
  });

  it("gives each of a design's windows its own product, in the order they ran", () => {
    // Prepare: a first window over the whole profile (80 ms of the gateway's CPU, 10 of Redis's) and a
    // second over four of its samples (40 ms of the gateway's, 30 of Redis's), 100 requests each
    const threads = readProfiles(PROFILES);
    const first = surgeWindow({ gateway: 80, redis: 10 });
    const second = surgeWindow({ gateway: 40, redis: 30 }, 1_000_400, 1_000_800);

    // Act
    const perWindow = productPerWindow([first, second], threads);

    // Assess: 6 of 8 placed samples the product's in the first (0.6 + 0.1), 3 of 4 in the second (0.3 + 0.3)
    expect(perWindow).toEqual([0.7, 0.6]);
    expect(designCpu([first, second], threads).product_ms_per_request).toBe(0.65);
  });

  it('gets a profile from each node process and worker thread of a twin started with its environment, written as it exits', () => {
    // Prepare
    const dir = mkdtempSync(join(tmpdir(), 'surge-profiles-'));
    const script = `const { Worker } = require('node:worker_threads');
      new Worker('let x = 0; for (let i = 0; i < 1e6; i++) x += i;', { eval: true }).on('exit', () => process.exit(0));`;

    // Act
    const child = spawnSync(process.execPath, ['-e', script], { env: { ...process.env, ...profilingEnv(dir) } });

    // Assess: the main thread's and the worker's, under the process's pid, each readable
    expect(child.status).toBe(0);
    expect(
      readdirSync(dir)
        .filter((f) => f.endsWith('.cpuprofile'))
        .sort(),
    ).toEqual([`profile.${child.pid}.0.cpuprofile`, `profile.${child.pid}.1.cpuprofile`]);
    expect(readProfiles(dir).map((thread) => thread.pid)).toEqual([child.pid, child.pid]);
  });

  it("keeps a terminated worker thread's samples up to its last flush, and waits for a flush after a given moment", async () => {
    // Prepare: a worker that works in turns of its event loop, flushing every 500 ms, until the
    // test leaves a stop file; then it is terminated, as the mail function's parser threads are
    const dir = mkdtempSync(join(tmpdir(), 'surge-profiles-'));
    const stop = join(dir, 'stop');
    const flushMs = 500;
    const flushesOfThread1 = () => readdirSync(dir).filter((f) => /^profile\.\d+\.1-\d+\.cpuprofile$/.test(f));
    const worker = `const { existsSync } = require('node:fs');
      const spin = () => {
        let x = 0;
        for (let i = 0; i < 1e5; i++) x += i;
        if (existsSync(${JSON.stringify(stop)})) require('node:worker_threads').parentPort.postMessage('stopped');
        else setImmediate(spin);
      };
      spin();`;
    const script = `const { Worker } = require('node:worker_threads');
      const w = new Worker(${JSON.stringify(worker)}, { eval: true });
      w.once('message', () => w.terminate().then(() => process.exit(0)));`;
    const child = spawn(process.execPath, ['-e', script], { env: { ...process.env, ...profilingEnv(dir, '', flushMs) } });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      await until(async () => flushesOfThread1().length > 0, 60_000, 'the first flush', 20);

      // Act: wait for every worker thread's flush since now
      const since = Date.now();
      await workerProfilesFlushed(dir, since, flushMs);
      const flushedSince = flushesOfThread1().filter((f) => statSync(join(dir, f)).mtimeMs >= since);
      writeFileSync(stop, '');

      // Assess: a flush written after the moment waited from was there when the wait ended; every
      // file is read as the process's threads with samples in them. Whether the terminated worker
      // also wrote its exit profile is Node's to say (CI has seen both): each file holds a window of
      // its own, so either way every file is read and nothing twice.
      expect(flushedSince.length).toBeGreaterThan(0);
      expect(await exited).toBe(0);
      const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
      expect(files).toContain(`profile.${child.pid}.0.cpuprofile`);
      const threads = readProfiles(dir);
      expect(threads).toHaveLength(files.length);
      expect(threads.every((thread) => thread.pid === child.pid)).toBe(true);
      expect(threads.reduce((sum, thread) => sum + thread.times.length, 0)).toBeGreaterThan(0);
    } finally {
      child.kill();
    }
  });
});
