import { Worker } from 'node:worker_threads';
import type { FunctionSpec } from '../../functions/table';
import { FunctionError } from './lambda';

const HOST = new URL('./function-host.mjs', import.meta.url);
const REGION = 'us-east-1';

type Reply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: { name: string; message: string } };

/** One instance: a worker thread that imported the function's bundle with exactly its environment. */
class Instance {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void; timer: NodeJS.Timeout }>();
  private nextId = 0;
  readonly ready: Promise<void>;
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
    this.ready = new Promise((resolve) => this.worker.once('message', () => resolve()));
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
      for (const [id, call] of this.pending) {
        this.settle(id);
        call.reject(new FunctionError(`Runtime exited: ${error.message}`));
      }
    };
    this.worker.on('error', fail).on('exit', (code) => fail(new Error(`exit code ${code}`)));
  }

  private settle(id: number): void {
    const call = this.pending.get(id)!;
    clearTimeout(call.timer);
    this.pending.delete(id);
    this.inFlight -= 1;
    if (this.inFlight === 0) this.worker.unref();
  }

  async invoke(event: unknown, onTimeout: () => void): Promise<unknown> {
    await this.ready;
    const timeoutMs = this.spec.timeoutSeconds * 1000;
    const id = this.nextId++;
    this.inFlight += 1;
    this.worker.ref();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.settle(id);
        reject(new FunctionError(`Task timed out after ${this.spec.timeoutSeconds.toFixed(2)} seconds`));
        onTimeout();
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      this.worker.postMessage({ id, event, deadline: Date.now() + timeoutMs });
    });
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
 * for one), and an instance that timed out is replaced, as Lambda resets it.
 */
export class BundleLambda {
  private readonly instances: Instance[] = [];
  private readonly idle: Instance[] = [];
  private readonly waiting: ((instance: Instance) => void)[] = [];
  /** Instances started, for benchmarks: Lambda's cold starts. */
  coldStarts = 0;

  constructor(
    readonly spec: FunctionSpec,
    private readonly bundle: string,
    private readonly env: Record<string, string>,
    private readonly options: BundleLambdaOptions = {},
  ) {}

  private start(): Instance {
    const instance = new Instance(this.spec, this.bundle, this.env);
    this.coldStarts += 1;
    this.instances.push(instance);
    return instance;
  }

  async warm(): Promise<void> {
    const instance = this.instances.find((i) => !i.dead) ?? this.start();
    await instance.ready;
    if (this.options.instances && !this.idle.includes(instance) && instance.inFlight === 0) this.idle.push(instance);
  }

  private acquire(): Promise<Instance> | Instance {
    const cap = this.options.instances;
    if (!cap) return this.instances.find((i) => !i.dead) ?? this.start();
    while (this.idle.length) {
      const instance = this.idle.pop()!;
      if (!instance.dead) return instance;
    }
    if (this.instances.filter((i) => !i.dead).length < cap) return this.start();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(instance: Instance): void {
    if (!this.options.instances || instance.dead) return;
    const next = this.waiting.shift();
    if (next) next(instance);
    else this.idle.push(instance);
  }

  async invoke(event: unknown): Promise<unknown> {
    const instance = await this.acquire();
    const replace = () => {
      // Lambda tears down an instance whose invocation timed out; what else it ran is lost with it.
      if (this.options.instances) void instance.stop();
    };
    try {
      return await instance.invoke(event, replace);
    } finally {
      this.release(instance);
      if (this.options.instances && instance.dead) {
        const next = this.waiting.shift();
        if (next) next(this.start());
      }
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.instances.map((i) => i.stop()));
  }
}
