import type { FunctionSpec } from '../../../functions/table';
import { Instance } from './bundle-instance';
import { coreSlots, type InitSlots } from './init-slots';
import { FunctionMeter } from './invocations';
import { Throttled } from './concurrency';
import { FunctionError } from './lambda';

/** Lambda's limit on a function's initialisation (its cold start). */
const INIT_TIMEOUT_MS = 10_000;

export interface BundleLambdaOptions {
  /**
   * Lambda's instance model: each invocation on an instance of its own, at most this many at once
   * (a managed function's: see BundleLambda). Absent: one instance serves every invocation concurrently.
   */
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
 *
 * A function on Managed Instances (the table's managedInstances) is served in that model by its
 * execution environments: each takes up to perEnvironmentConcurrency invocations at once, and
 * there are minEnvironments of them, all started by warm() as Lambda starts them before a version
 * takes traffic. Lambda adds environments only as their CPU stays high, minutes behind a crowd: the
 * twin adds none, and throttles an invocation that finds every slot taken (Throttled), as Lambda
 * does until it has scaled. One that died is replaced at once; a timeout ends its environment, as
 * on the default compute, with its other invocations.
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
  /** What Lambda would bill and log for its invocations, whichever instance ran them. */
  private readonly meter: FunctionMeter;
  /** Invocations one instance takes at once in the instance model: one, or a managed environment's. */
  private readonly perInstance: number;
  /** The most instances at once in the instance model. */
  private readonly cap: number;

  constructor(
    readonly spec: FunctionSpec,
    private readonly bundle: string,
    private readonly env: Record<string, string>,
    private readonly options: BundleLambdaOptions = {},
  ) {
    this.meter = new FunctionMeter(spec.id, spec.memoryMb);
    this.perInstance = spec.managedInstances?.perEnvironmentConcurrency ?? 1;
    this.cap = spec.managedInstances?.minEnvironments ?? options.instances ?? 1;
  }

  private live(): Instance[] {
    for (const instance of this.instances) if (instance.dead) this.instances.delete(instance);
    return [...this.instances];
  }

  private start(): Instance {
    if (this.stopped) throw new FunctionError(`${this.spec.id} was stopped`);
    const instance = new Instance(
      this.spec,
      this.bundle,
      this.env,
      this.options.initSlots ?? coreSlots,
      this.options.initTimeoutMs ?? INIT_TIMEOUT_MS,
      this.meter,
    );
    this.coldStarts += 1;
    this.instances.add(instance);
    if (this.options.instances) {
      this.starting += 1;
      instance.ready.then(
        () => {
          this.starting -= 1;
          for (let slot = 0; slot < this.perInstance; slot++) this.offer(instance);
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

  /** As Lambda scales out: an instance started for the waiting invocations that no starting one will take, up to the cap. */
  private scale(): void {
    while (!this.stopped && this.waiting.length > this.starting * this.perInstance && this.live().length < this.cap) this.start();
  }

  /** A managed function's environments kept at their number, as Lambda keeps its minimum running: one that died is replaced at once. */
  private keepEnvironments(): void {
    while (!this.stopped && this.live().length < this.cap) this.start();
  }

  /** A slot of an instance free for the next invocation: the longest waiting one's, or idle; one that died is replaced if invocations wait. */
  private offer(instance: Instance): void {
    if (instance.dead) return this.spec.managedInstances ? this.keepEnvironments() : this.scale();
    const next = this.waiting.shift();
    if (next) next.resolve(instance);
    else this.idle.push(instance);
  }

  /**
   * One instance made ready before traffic, as provisioned concurrency would, or a managed
   * function's every environment in the instance model; in that model they are then idle.
   */
  async warm(): Promise<void> {
    const wanted = this.options.instances && this.spec.managedInstances ? this.cap : 1;
    while (this.live().length < wanted) this.start();
    await Promise.all(this.live().map((instance) => instance.ready));
  }

  /**
   * A free slot: the last idle instance's, or for a managed function's environments, one of the
   * environment with the most slots free, as Lambda spreads invocations over its environments
   * rather than filling one first (which would coalesce more sends in one than it does).
   */
  private takeSlot(): Instance | undefined {
    if (this.perInstance === 1 || this.idle.length < 2) return this.idle.pop();
    const free = new Map<Instance, number>();
    for (const instance of this.idle) free.set(instance, (free.get(instance) ?? 0) + 1);
    let best = this.idle.length - 1;
    for (let at = best - 1; at >= 0; at--) if (free.get(this.idle[at]!)! > free.get(this.idle[best]!)!) best = at;
    return this.idle.splice(best, 1)[0];
  }

  private acquire(): Promise<Instance> | Instance {
    if (this.stopped) throw new FunctionError(`${this.spec.id} was stopped`);
    if (!this.options.instances) return this.live()[0] ?? this.start();
    for (let instance = this.takeSlot(); instance; instance = this.takeSlot()) if (!instance.dead) return instance;
    // Every slot of every environment taken, none starting: Lambda throttles until it has scaled, minutes later.
    if (this.spec.managedInstances && this.starting === 0 && this.live().length >= this.cap)
      throw new Throttled(`${this.spec.id}: its ${this.cap} environments each run ${this.perInstance} invocations`);
    const taken = new Promise<Instance>((resolve, reject) => this.waiting.push({ resolve, reject }));
    this.scale();
    return taken;
  }

  async invoke(event: unknown): Promise<unknown> {
    const instance = await this.acquire();
    // Lambda tears down an instance whose invocation timed out; what else it ran is lost with it. (What it does to
    // a managed environment's other invocations we found no word of: the twin does the same, the harsher.)
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
