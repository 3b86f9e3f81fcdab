/** One Lambda instance of a bundle: a worker thread, held to Lambda's init limit and to each invocation's timeout. */
import { Worker } from 'node:worker_threads';
import type { FunctionSpec } from '../../../functions/table';
import type { InitSlots } from './init-slots';
import type { FunctionMeter } from './invocations';
import { FunctionError } from './lambda';
import { scheduleOf, type Schedule } from './thread-schedule';

const HOST = new URL('./function-host.mjs', import.meta.url);
const REGION = 'us-east-1';

/**
 * The twin process's preloads (`--require` in its NODE_OPTIONS: a bench's profiler) for a thread
 * given its function's environment alone, from which Node would take the thread's NODE_OPTIONS.
 */
const preloadsOfTwin = () => [...(process.env.NODE_OPTIONS ?? '').matchAll(/(?:--require|-r)[= ](\S+)/g)].flatMap((m) => ['--require', m[1]!]);

/**
 * The twin process's own node flags for a thread, less tsx's loader (`--import tsx` when started
 * by npm start): a bundle is plain JavaScript, and tsx's hooks cost each instance's start ~70 ms of
 * CPU (about 130 against 60 here) that Lambda's runtime never pays.
 */
const execArgvOfTwin = () => {
  const flags: string[] = [];
  for (let i = 0; i < process.execArgv.length; i++) {
    const flag = process.execArgv[i]!;
    if (['--import', '--loader', '--require', '-r'].includes(flag) && /\btsx\b/.test(process.execArgv[i + 1] ?? '')) i += 1;
    else if (!/^--(import|loader|require)=.*\btsx\b/.test(flag)) flags.push(flag);
  }
  return flags;
};

/** How long a thread asked to exit has before it is terminated. */
const STOP_GRACE_MS = 1_000;

/** How often an init that looks over its limit is looked at again while its thread waits for a core. */
const WAIT_PROBE_MS = 100;

/** The host's answer to an invocation, with how long the handler ran (function-host.mjs). */
type Reply = ({ id: number; ok: true; result: unknown } | { id: number; ok: false; error: { name: string; message: string } }) & { durationMs: number };

/** One instance: a worker thread that imported the function's bundle with exactly its environment. */
export class Instance {
  private worker?: Worker;
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void; timer: NodeJS.Timeout; posted: number }>();
  private nextId = 0;
  /**
   * Settles once the bundle is imported (an import error is reported per invocation, as Lambda
   * does), or rejects if the thread dies or outlives the init limit first. The thread starts once
   * it has an init slot; the limit counts from then.
   */
  readonly ready: Promise<void>;
  /** Invocations taken, counted from the moment they are, not from when the instance is ready. */
  inFlight = 0;
  dead = false;

  constructor(
    private readonly spec: FunctionSpec,
    bundle: string,
    env: Record<string, string>,
    slots: InitSlots,
    initTimeoutMs: number,
    /** Where its invocations and output are counted: its function's, shared by all its instances. */
    private readonly meter: FunctionMeter,
  ) {
    this.ready = slots.take().then(async (release) => {
      try {
        if (this.dead) throw new FunctionError(`${spec.id} was stopped before its init`);
        await this.init(bundle, env, initTimeoutMs);
      } finally {
        release();
      }
    });
    this.ready.catch(() => undefined);
  }

  private init(bundle: string, env: Record<string, string>, initTimeoutMs: number): Promise<void> {
    const worker = new Worker(HOST, {
      env,
      execArgv: [...execArgvOfTwin(), ...preloadsOfTwin()],
      workerData: { bundle, functionName: `surge-${this.spec.id}`, memoryMb: this.spec.memoryMb, region: REGION },
      // Lambda gives each instance its memory; a function that needs more fails as it would there.
      resourceLimits: { maxOldGenerationSizeMb: this.spec.memoryMb },
      // Its output is relayed here rather than piped straight through, so that every byte of it,
      // at init, in an invocation or from a timer, is counted against this function.
      stdout: true,
      stderr: true,
    });
    this.worker = worker;
    this.relay(worker.stdout, process.stdout);
    this.relay(worker.stderr, process.stderr);
    // An idle instance keeps no process alive, as the twin's timers do not.
    worker.unref();
    let died: (error: Error) => void = () => undefined;
    // The init limit counts the init's own time: from when its thread started, less what the thread
    // spent waiting for a core that other threads and processes held. On Lambda the instance has a
    // CPU of its own; on a busy two-core machine a 0.3 s import took over 10 s of the clock.
    const began = performance.now();
    /** The thread's id once it has said it (null: it cannot be looked up, and the init counts the clock). */
    let thread: number | null | undefined;
    const ready = new Promise<void>((resolve, reject) => {
      let timer: NodeJS.Timeout;
      const probe = (schedule?: Schedule) => void (timer = setTimeout(() => check(schedule), WAIT_PROBE_MS).unref());
      const check = (previous?: Schedule) => {
        // A thread that has not yet run the host's first line has had no core to run it on.
        if (thread === undefined) return probe();
        const schedule = thread === null ? undefined : scheduleOf(thread);
        const left = initTimeoutMs - (performance.now() - began - (schedule?.waitedMs ?? 0));
        if (left > 0) return void (timer = setTimeout(check, left).unref());
        // Over, unless the thread is waiting for a core now (runnable, and no CPU time since the last look).
        if (schedule?.runnable && schedule.cpuMs === (previous ?? schedule).cpuMs) return probe(schedule);
        reject(new FunctionError(`${this.spec.id}: init timed out after ${initTimeoutMs / 1000} seconds`));
        void this.stop();
      };
      timer = setTimeout(check, initTimeoutMs).unref();
      worker.on('message', (message: Reply | { thread: number | null } | { ready: boolean; startCpuMs?: number; importCpuMs?: number }) => {
        if ('thread' in message) thread = message.thread;
        else if ('ready' in message) {
          clearTimeout(timer);
          const schedule = thread ? scheduleOf(thread) : undefined;
          this.meter.initialised({ cpuMs: schedule?.cpuMs, importCpuMs: message.importCpuMs }, performance.now() - began - (schedule?.waitedMs ?? 0));
          resolve();
        }
      });
      died = (error) => (clearTimeout(timer), reject(error));
    });
    worker.on('message', (reply: Reply | { thread: number | null } | { ready: boolean }) => {
      if (!('id' in reply)) return;
      const call = this.pending.get(reply.id);
      if (!call) return;
      this.settle(reply.id);
      this.meter.invoked(reply.durationMs);
      if (reply.ok) call.resolve(reply.result);
      else call.reject(new FunctionError(reply.error.message, { cause: reply.error }));
    });
    const fail = (error: Error) => {
      this.dead = true;
      const exited = new FunctionError(`Runtime exited: ${error.message}`);
      died(exited);
      for (const [id, call] of this.pending) {
        this.settle(id);
        this.meter.invoked(performance.now() - call.posted);
        call.reject(exited);
      }
    };
    worker.on('error', fail).on('exit', (code) => fail(new Error(`exit code ${code}`)));
    return ready;
  }

  /** Counts what the thread wrote, then writes it where Node would have piped it. */
  private relay(from: NodeJS.ReadableStream, to: NodeJS.WriteStream): void {
    from.on('data', (chunk: Buffer | string) => {
      this.meter.wrote(typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength);
      to.write(chunk);
    });
  }

  private settle(id: number): void {
    const call = this.pending.get(id)!;
    clearTimeout(call.timer);
    this.pending.delete(id);
  }

  async invoke(event: unknown, onTimeout: () => void): Promise<unknown> {
    this.inFlight += 1;
    try {
      await this.ready;
      const worker = this.worker;
      if (this.dead || !worker) throw new FunctionError('Runtime exited before the invocation');
      worker.ref();
      const timeoutMs = this.spec.timeoutSeconds * 1000;
      const id = this.nextId++;
      return await new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          this.settle(id);
          this.meter.invoked(timeoutMs);
          reject(new FunctionError(`Task timed out after ${this.spec.timeoutSeconds.toFixed(2)} seconds`));
          onTimeout();
        }, timeoutMs);
        this.pending.set(id, { resolve, reject, timer, posted: performance.now() });
        worker.postMessage({ id, event, deadline: Date.now() + timeoutMs });
      });
    } finally {
      this.inFlight -= 1;
      if (this.inFlight === 0) this.worker?.unref();
    }
  }

  /**
   * Ends the thread; one still waiting for an init slot never starts. It is asked to exit first, so
   * that what runs at a thread's exit runs (the benches' profile of it: load/support/profile-preload.cjs),
   * and terminated if it has not within STOP_GRACE_MS (busy, or still importing its bundle).
   */
  async stop(): Promise<void> {
    this.dead = true;
    const worker = this.worker;
    if (!worker) return;
    let timer: NodeJS.Timeout | undefined;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage({ exit: true });
    await Promise.race([exited, new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_GRACE_MS)))]);
    clearTimeout(timer);
    await worker.terminate();
  }
}
