import { Worker } from 'node:worker_threads';
import type { FunctionSpec } from '../../functions/table';
import { FunctionError } from './lambda';

const HOST = new URL('./function-host.mjs', import.meta.url);
const REGION = 'us-east-1';
/** Lambda's limit on a function's initialisation (its cold start). */
const INIT_TIMEOUT_MS = 10_000;

type Reply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: { name: string; message: string } };

/** One instance: a worker thread that imported the function's bundle with exactly its environment. */
class Instance {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void; timer: NodeJS.Timeout }>();
  private nextId = 0;
  /** Settles once the bundle is imported (an import error is reported per invocation, as Lambda does), or rejects if the thread dies or hangs first. */
  readonly ready: Promise<void>;
  /** Invocations taken, counted from the moment they are, not from when the instance is ready. */
  inFlight = 0;
  dead = false;

  constructor(
    private readonly spec: FunctionSpec,
    bundle: string,
    env: Record<string, string>,
  ) {
    this.worker = new Worker(HOST, {
      env,
      workerData: { bundle, functionName: `surge-${spec.id}`, memoryMb: spec.memoryMb, region: REGION },
      // Lambda gives each instance its memory; a function that needs more fails as it would there.
      resourceLimits: { maxOldGenerationSizeMb: spec.memoryMb },
    });
    // An idle instance keeps no process alive, as the twin's timers do not.
    this.worker.unref();
    let died: (error: Error) => void = () => undefined;
    this.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new FunctionError(`${spec.id}: init timed out after ${INIT_TIMEOUT_MS / 1000} seconds`));
        void this.stop();
      }, INIT_TIMEOUT_MS).unref();
      this.worker.once('message', () => (clearTimeout(timer), resolve()));
      died = (error) => (clearTimeout(timer), reject(error));
    });
    this.ready.catch(() => undefined);
    this.worker.on('message', (reply: Reply | { ready: boolean }) => {
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
    this.worker.on('error', fail).on('exit', (code) => fail(new Error(`exit code ${code}`)));
  }

  private settle(id: number): void {
    const call = this.pending.get(id)!;
    clearTimeout(call.timer);
    this.pending.delete(id);
  }

  async invoke(event: unknown, onTimeout: () => void): Promise<unknown> {
    this.inFlight += 1;
    this.worker.ref();
    try {
      await this.ready;
      if (this.dead) throw new FunctionError('Runtime exited before the invocation');
      const timeoutMs = this.spec.timeoutSeconds * 1000;
      const id = this.nextId++;
      return await new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          this.settle(id);
          reject(new FunctionError(`Task timed out after ${this.spec.timeoutSeconds.toFixed(2)} seconds`));
          onTimeout();
        }, timeoutMs);
        this.pending.set(id, { resolve, reject, timer });
        this.worker.postMessage({ id, event, deadline: Date.now() + timeoutMs });
      });
    } finally {
      this.inFlight -= 1;
      if (this.inFlight === 0) this.worker.unref();
    }
  }

  stop(): Promise<number> {
    this.dead = true;
    return this.worker.terminate();
  }
}

export interface BundleLambdaOptions {
  /** Lambda's instance model: each invocation on an instance of its own, at most this many at once. Absent: one instance serves every invocation concurrently. */
  instances?: number;
}

/**
 * A table function run as its bundle, the artefact `cdk deploy` uploads, in worker threads whose
 * environment is exactly its row's. By default one instance takes every invocation, as the twin's
 * source mode does. With `instances`, invocations are spread as Lambda spreads them: one event at
 * a time per instance, a new instance when all are busy (up to the cap; beyond it invocations wait
 * for one), and an instance that timed out or died is replaced, as Lambda resets it.
 */
export class BundleLambda {
  private readonly instances: Instance[] = [];
  private readonly idle: Instance[] = [];
  private readonly waiting: { resolve(instance: Instance): void; reject(error: Error): void }[] = [];
  private stopped = false;
  /** Instances started, for benchmarks: Lambda's cold starts. */
  coldStarts = 0;

  constructor(
    readonly spec: FunctionSpec,
    private readonly bundle: string,
    private readonly env: Record<string, string>,
    private readonly options: BundleLambdaOptions = {},
  ) {}

  private live(): Instance[] {
    return this.instances.filter((i) => !i.dead);
  }

  private start(): Instance {
    if (this.stopped) throw new FunctionError(`${this.spec.id} was stopped`);
    const instance = new Instance(this.spec, this.bundle, this.env);
    this.coldStarts += 1;
    this.instances.push(instance);
    return instance;
  }

  /** One instance made ready before traffic, as provisioned concurrency would; in the instance model it is then idle. */
  async warm(): Promise<void> {
    const instance = this.live()[0] ?? this.start();
    await instance.ready;
    if (this.options.instances && instance.inFlight === 0 && !this.idle.includes(instance)) this.idle.push(instance);
  }

  private acquire(): Promise<Instance> | Instance {
    if (this.stopped) throw new FunctionError(`${this.spec.id} was stopped`);
    const cap = this.options.instances;
    if (!cap) return this.live()[0] ?? this.start();
    while (this.idle.length) {
      const instance = this.idle.pop()!;
      if (!instance.dead && instance.inFlight === 0) return instance;
    }
    if (this.live().length < cap) return this.start();
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  /** Hands a finished instance to the next waiting invocation, or a fresh one if it died. */
  private release(instance: Instance): void {
    if (!this.options.instances) return;
    const next = this.waiting.shift();
    if (!next) {
      if (!instance.dead) this.idle.push(instance);
      return;
    }
    try {
      next.resolve(instance.dead ? this.start() : instance);
    } catch (error) {
      next.reject(error as Error);
    }
  }

  async invoke(event: unknown): Promise<unknown> {
    const instance = await this.acquire();
    // Lambda tears down an instance whose invocation timed out; what else it ran is lost with it.
    const replace = () => void (this.options.instances ? instance.stop() : undefined);
    try {
      return await instance.invoke(event, replace);
    } finally {
      this.release(instance);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const waiter of this.waiting.splice(0)) waiter.reject(new FunctionError(`${this.spec.id} was stopped`));
    await Promise.all(this.instances.map((i) => i.stop()));
  }
}
