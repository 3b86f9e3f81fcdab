import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { FunctionSpec } from '../../functions/table';
import { FunctionError } from './lambda';

const HOST = new URL('./function-host.mjs', import.meta.url);
const REGION = 'us-east-1';
/** Lambda's limit on a function's initialisation (its cold start). */
const INIT_TIMEOUT_MS = 10_000;

/**
 * How many cold starts run at once. A Lambda instance initialises on a CPU share of its own; the
 * twin's instances share this machine's cores, and 64 started at once on two of them all passed
 * the 10 s init limit, each then replaced by another that did too. So the rest wait for a slot,
 * and an instance's init limit counts from when it has one.
 */
export class InitSlots {
  private free: number;
  private readonly queue: (() => void)[] = [];

  constructor(readonly size: number) {
    this.free = size;
  }

  /** Resolves once a slot is this caller's, with the function that gives it back. */
  async take(): Promise<() => void> {
    if (this.free > 0) this.free -= 1;
    else await new Promise<void>((resolve) => this.queue.push(resolve));
    let given = false;
    return () => {
      if (given) return;
      given = true;
      // A slot given back goes to the oldest waiter, so none waits behind newcomers.
      const next = this.queue.shift();
      if (next) next();
      else this.free += 1;
    };
  }
}

/** One slot per core, for every bundle runner in this process: they share the cores. */
const coreSlots = new InitSlots(availableParallelism());

/** A thread of this process as the scheduler sees it (/proc/<pid>/task/<thread>). */
interface Schedule {
  /** Time it has run on a core. */
  cpuMs: number;
  /** Time it has waited, runnable, for a core; a wait still going on is added only once it ends. */
  waitedMs: number;
  /** Running, or waiting for a core. */
  runnable: boolean;
}

function scheduleOf(thread: number): Schedule | undefined {
  try {
    const task = `/proc/${process.pid}/task/${thread}`;
    const [cpuNs, waitedNs] = readFileSync(`${task}/schedstat`, 'utf8').split(' ').map(Number);
    const stat = readFileSync(`${task}/stat`, 'utf8');
    return { cpuMs: cpuNs! / 1e6, waitedMs: waitedNs! / 1e6, runnable: stat[stat.lastIndexOf(')') + 2] === 'R' };
  } catch {
    return undefined;
  }
}

/** How often an init that looks over its limit is looked at again while its thread waits for a core. */
const WAIT_PROBE_MS = 100;

type Reply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: { name: string; message: string } };

/** One instance: a worker thread that imported the function's bundle with exactly its environment. */
class Instance {
  private worker?: Worker;
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void; timer: NodeJS.Timeout }>();
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
      workerData: { bundle, functionName: `surge-${this.spec.id}`, memoryMb: this.spec.memoryMb, region: REGION },
      // Lambda gives each instance its memory; a function that needs more fails as it would there.
      resourceLimits: { maxOldGenerationSizeMb: this.spec.memoryMb },
    });
    this.worker = worker;
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
      worker.on('message', (message: Reply | { thread: number | null } | { ready: boolean }) => {
        if ('thread' in message) thread = message.thread;
        else if ('ready' in message) (clearTimeout(timer), resolve());
      });
      died = (error) => (clearTimeout(timer), reject(error));
    });
    worker.on('message', (reply: Reply | { thread: number | null } | { ready: boolean }) => {
      if (!('id' in reply)) return;
      const call = this.pending.get(reply.id);
      if (!call) return;
      this.settle(reply.id);
      if (reply.ok) call.resolve(reply.result);
      else call.reject(new FunctionError(reply.error.message, { cause: reply.error }));
    });
    const fail = (error: Error) => {
      this.dead = true;
      const exited = new FunctionError(`Runtime exited: ${error.message}`);
      died(exited);
      for (const [id, call] of this.pending) {
        this.settle(id);
        call.reject(exited);
      }
    };
    worker.on('error', fail).on('exit', (code) => fail(new Error(`exit code ${code}`)));
    return ready;
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
          reject(new FunctionError(`Task timed out after ${this.spec.timeoutSeconds.toFixed(2)} seconds`));
          onTimeout();
        }, timeoutMs);
        this.pending.set(id, { resolve, reject, timer });
        worker.postMessage({ id, event, deadline: Date.now() + timeoutMs });
      });
    } finally {
      this.inFlight -= 1;
      if (this.inFlight === 0) this.worker?.unref();
    }
  }

  /** Ends the thread; one still waiting for an init slot never starts. */
  async stop(): Promise<void> {
    this.dead = true;
    await this.worker?.terminate();
  }
}

export interface BundleLambdaOptions {
  /** Lambda's instance model: each invocation on an instance of its own, at most this many at once. Absent: one instance serves every invocation concurrently. */
  instances?: number;
  /** Where the instances' cold starts wait their turn; by default this process's, one per core. */
  initSlots?: InitSlots;
  /** Lambda's init limit, 10 s unless a test asks for less. */
  initTimeoutMs?: number;
}

/**
 * A table function run as its bundle, the artefact `cdk deploy` uploads, in worker threads whose
 * environment is exactly its row's. By default one instance takes every invocation, as the twin's
 * source mode does. With `instances`, invocations are spread as Lambda spreads them: one event at
 * a time per instance, and an invocation that finds none idle starts one (up to the cap) and
 * waits for the first instance to be free, whether that new one once its init is done or one that
 * finished what it ran. An instance that timed out or died is replaced, as Lambda resets it; one
 * whose init failed fails the longest-waiting invocation, as the one it was started for would.
 */
export class BundleLambda {
  private readonly instances = new Set<Instance>();
  private readonly idle: Instance[] = [];
  private readonly waiting: { resolve(instance: Instance): void; reject(error: Error): void }[] = [];
  /** Instances started whose init has not ended, waiting for a slot or running it. */
  private starting = 0;
  private stopped = false;
  /** Instances started, for benchmarks: Lambda's cold starts. */
  coldStarts = 0;
  /** Of those, the ones whose init failed: timed out, or the thread died. */
  initFailures = 0;

  constructor(
    readonly spec: FunctionSpec,
    private readonly bundle: string,
    private readonly env: Record<string, string>,
    private readonly options: BundleLambdaOptions = {},
  ) {}

  private live(): Instance[] {
    for (const instance of this.instances) if (instance.dead) this.instances.delete(instance);
    return [...this.instances];
  }

  private start(): Instance {
    if (this.stopped) throw new FunctionError(`${this.spec.id} was stopped`);
    const instance = new Instance(this.spec, this.bundle, this.env, this.options.initSlots ?? coreSlots, this.options.initTimeoutMs ?? INIT_TIMEOUT_MS);
    this.coldStarts += 1;
    this.instances.add(instance);
    if (this.options.instances) {
      this.starting += 1;
      instance.ready.then(
        () => {
          this.starting -= 1;
          this.offer(instance);
        },
        (error: Error) => {
          this.starting -= 1;
          this.initFailures += 1;
          this.waiting.shift()?.reject(error);
          this.scale();
        },
      );
    }
    return instance;
  }

  /** As Lambda scales out: an instance started for each waiting invocation that no starting one will take, up to the cap. */
  private scale(): void {
    while (!this.stopped && this.waiting.length > this.starting && this.live().length < this.options.instances!) this.start();
  }

  /** An instance free for the next invocation: the longest waiting one's, or idle; one that died is replaced if invocations wait. */
  private offer(instance: Instance): void {
    if (instance.dead) return this.scale();
    const next = this.waiting.shift();
    if (next) next.resolve(instance);
    else this.idle.push(instance);
  }

  /** One instance made ready before traffic, as provisioned concurrency would; in the instance model it is then idle. */
  async warm(): Promise<void> {
    await (this.live()[0] ?? this.start()).ready;
  }

  private acquire(): Promise<Instance> | Instance {
    if (this.stopped) throw new FunctionError(`${this.spec.id} was stopped`);
    if (!this.options.instances) return this.live()[0] ?? this.start();
    while (this.idle.length) {
      const instance = this.idle.pop()!;
      if (!instance.dead) return instance;
    }
    const taken = new Promise<Instance>((resolve, reject) => this.waiting.push({ resolve, reject }));
    this.scale();
    return taken;
  }

  async invoke(event: unknown): Promise<unknown> {
    const instance = await this.acquire();
    // Lambda tears down an instance whose invocation timed out; what else it ran is lost with it.
    const replace = () => void (this.options.instances ? instance.stop() : undefined);
    try {
      return await instance.invoke(event, replace);
    } finally {
      if (this.options.instances) this.offer(instance);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const waiter of this.waiting.splice(0)) waiter.reject(new FunctionError(`${this.spec.id} was stopped`));
    await Promise.all([...this.instances].map((i) => i.stop()));
  }
}
