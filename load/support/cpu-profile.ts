/**
 * Where a twin process's CPU went, from the V8 CPU profiles its node processes write at exit
 * (profile-preload.cjs, the `--cpu-prof` format): which of it was the product (the functions' code and the libraries they call,
 * which Lambda bills) and which the twin's stand-ins (API Gateway's emulation, the SQS poller,
 * the SES listener), for any window of the run, plus the functions with the most self time.
 *
 * A sample is the product's or a stand-in's by the frames on its stack, leaf first: the first
 * frame of the project's own code decides (functions/, shared/ and load/baselines/ are the
 * product; infra/ the twin); a stack with none is decided by its leaf-most package: one the
 * product depends on at run time is the product's, any other a stand-in's — except the AWS SDK's
 * in the consumers' process, where the poller (SQS's stand-in) is what calls it: the writer
 * never does, and its async work has no frame of the poller's to go by. Stacks of Node's
 * internals alone — socket reads, the HTTP parser, the garbage collector, native code — belong
 * to neither by their frames; they are shared out in the proportion of the rest, and their share
 * is reported so that the approximation can be judged.
 *
 * Windows are matched by time: profiles count in microseconds of the monotonic clock, which is
 * what process.hrtime gives here too.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { until } from '../../shared/platform/wait';

/**
 * A sample every 10 ms, not every 1 ms: the sampler taxed a path with deep asynchronous stacks more
 * than its floor. In the sessions bench (2026-12-06, functions from sources) the gateway's process
 * cost `GET /me` 15–37 µs a request more than its floor's at 1 ms (five runs), and 4–21 µs more at
 * 10 ms or unprofiled (eight runs): the ratio to the floor was 0.59–0.77 and 0.65–0.88. A process
 * busy for one 5 s turn still gives 500 samples to split. Each sample's weight is capped at the
 * interval (readThread), so a thread that waited up to 10 ms for a core has the wait counted to
 * what it was doing; the splits' shares of socket writes moved no more between the two intervals
 * than between runs.
 */
export const PROFILE_INTERVAL_US = 10_000;
/**
 * How often a worker thread writes what it has sampled and starts again (profile-preload.cjs).
 * Each stop and start (the inspector's `dispatch`) took 20–120 ms of a parser thread's CPU, 55 on
 * average (2026-12-06, the mail bench's twin from sources, sampled every 10 ms). Every 2 s, the
 * eight parser threads spent about a fifth of a core on it while mail arrived, ~1.2 ms a mail of
 * the machine's ~10.5: billed to no side the product owns, but slowing every mail measured.
 */
const WORKER_FLUSH_MS = 10_000;
const PRELOAD = fileURLToPath(new URL('./profile-preload.cjs', import.meta.url));

/**
 * The environment of a twin whose node processes (and their worker threads) each write a profile
 * into dir as they exit: NODE_OPTIONS preloads a file written into dir that starts the profiler
 * with dir named in it, since a bundle's worker thread has only its function's environment.
 */
export function profilingEnv(dir: string, existingOptions = '', workerFlushMs = WORKER_FLUSH_MS): Record<string, string> {
  const starter = join(dir, 'start-profiling.cjs');
  writeFileSync(starter, `require(${JSON.stringify(PRELOAD)})(${JSON.stringify(dir)}, ${PROFILE_INTERVAL_US}, ${workerFlushMs});\n`);
  return { NODE_OPTIONS: `${existingOptions} --require ${starter}`.trim() };
}

/**
 * Waits until every worker thread that has written a profile into dir has written one since
 * `sinceMs` (wall clock), so that a twin stopped after it loses none of the samples before then:
 * a stopped process's worker threads never write what they sampled after their last flush. A
 * thread that stopped earlier (a parser thread past a limit) never writes again; after three
 * flush intervals its earlier files are taken as they are.
 */
export async function workerProfilesFlushed(dir: string, sinceMs: number, workerFlushMs = WORKER_FLUSH_MS): Promise<void> {
  const flushedSince = () => {
    const latest = new Map<string, number>();
    for (const f of readdirSync(dir)) {
      const thread = /^profile\.(\d+\.\d+)-\d+\.cpuprofile$/.exec(f)?.[1];
      if (thread) latest.set(thread, Math.max(latest.get(thread) ?? 0, statSync(join(dir, f)).mtimeMs));
    }
    return [...latest.values()].every((at) => at >= sinceMs);
  };
  await until(async () => flushedSince(), 3 * workerFlushMs, 'worker threads flushed their profiles', 250, { atDeadline: 'give up' });
}

/** Microseconds of the monotonic clock, as the profiles count. */
export function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

export type Side = 'product' | 'stand_in' | 'unattributed' | 'idle';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface ProfileFile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** One thread's profile, its samples placed in time and each node's side decided once. */
interface ThreadProfile {
  pid: number;
  times: Float64Array;
  weights: Float64Array;
  sampleNodes: Int32Array;
  /** Each sampled node's side, as a rule: the SDK the product's (gateway) or a stand-in's (consumers). */
  side: Record<PackageRule, Map<number, Side>>;
  frame: Map<number, { name: string; where: string }>;
}

/** How a process's packages are told apart: 'gateway' (the product's are its own), 'consumers' (the AWS SDK is the poller's). */
export type PackageRule = 'gateway' | 'consumers';

/** The packages the product loads at run time — package.json's dependencies and everything they need — by rule. */
export function productPackages(root = '.'): Record<PackageRule, Set<string>> {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dependencies?: Record<string, string> }>;
  };
  const closure = (roots: string[]) => {
    const seen = new Set<string>();
    const visit = (name: string) => {
      if (seen.has(name)) return;
      seen.add(name);
      for (const dep of Object.keys(lock.packages[`node_modules/${name}`]?.dependencies ?? {})) visit(dep);
    };
    roots.forEach(visit);
    return seen;
  };
  const direct = Object.keys(lock.packages['']?.dependencies ?? {});
  const isSdk = (name: string) => name.startsWith('@aws-sdk/') || name.startsWith('@smithy/');
  const all = closure(direct);
  const withoutSdk = closure(direct.filter((name) => !isSdk(name)));
  return { gateway: all, consumers: new Set([...withoutSdk].filter((name) => !isSdk(name))) };
}

const SPECIAL: Record<string, Side> = { '(idle)': 'idle', '(garbage collector)': 'unattributed', '(program)': 'unattributed', '(root)': 'unattributed' };

/** The package a node_modules path belongs to (scoped or not), or undefined outside node_modules. */
function packageOf(url: string): string | undefined {
  const at = url.lastIndexOf('/node_modules/');
  if (at < 0) return undefined;
  const parts = url.slice(at + '/node_modules/'.length).split('/');
  return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
}

/** The side a frame's own code is on: project code decides, a package only suggests, Node's internals say nothing. */
function sideOfUrl(url: string, product: Set<string>): { side: 'product' | 'stand_in'; decisive: boolean } | undefined {
  if (!url || url.startsWith('node:')) return undefined;
  const pkg = packageOf(url);
  if (pkg) return { side: product.has(pkg) ? 'product' : 'stand_in', decisive: false };
  // A bundle `cdk deploy` ships, run by the twin's bundle mode, is the product's code.
  if (/\/(functions|shared|load\/baselines)\//.test(url) || /\/bundles?\//.test(url)) return { side: 'product', decisive: true };
  return { side: 'stand_in', decisive: true };
}

function readThread(file: string, pid: number, packages: Record<PackageRule, Set<string>>): ThreadProfile {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as ProfileFile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const decideWith = (product: Set<string>) => {
    const side = new Map<number, Side>();
    const decide = (id: number): Side => {
      const known = side.get(id);
      if (known) return known;
      const { functionName, url } = byId.get(id)!.callFrame;
      let decided: Side | undefined = url === '' ? SPECIAL[functionName] : undefined;
      let suggested: Side | undefined;
      for (let at: number | undefined = id; decided === undefined && at !== undefined; at = parent.get(at)) {
        const own = sideOfUrl(byId.get(at)!.callFrame.url, product);
        if (own?.decisive) decided = own.side;
        else if (own) suggested ??= own.side;
      }
      decided ??= suggested ?? 'unattributed';
      side.set(id, decided);
      return decided;
    };
    for (const id of new Set(profile.samples)) decide(id);
    return side;
  };
  const n = profile.samples.length;
  const times = new Float64Array(n);
  const weights = new Float64Array(n);
  const sampleNodes = Int32Array.from(profile.samples);
  let t = profile.startTime;
  for (let i = 0; i < n; i++) {
    t += profile.timeDeltas[i]!;
    times[i] = t;
  }
  // Each sample stands for the time until the next one (the last, until the profile ended), but
  // never more than one interval: V8's sampler signals the thread, so a thread waiting for a core
  // is sampled only once it runs again, and the whole wait would fall on whatever it was doing —
  // mostly the write that woke Redis or MariaDB. Capped, the weights follow time on a core.
  for (let i = 0; i < n; i++) {
    const until = i + 1 < n ? times[i + 1]! : profile.endTime;
    weights[i] = Math.min(PROFILE_INTERVAL_US, Math.max(0, until - times[i]!));
  }
  const side = { gateway: decideWith(packages.gateway), consumers: decideWith(packages.consumers) };
  const frame = new Map(
    profile.nodes.map((node) => {
      const { functionName, url, lineNumber } = node.callFrame;
      const file = url
        .replace(/^file:\/\//, '')
        .replace(/^.*\/node_modules\//, '')
        .replace(`${process.cwd()}/`, '');
      // Code tsx compiled on the fly reports line 0: its place is the file alone.
      return [node.id, { name: functionName || '(anonymous)', where: file && lineNumber > 0 ? `${file}:${lineNumber + 1}` : file }];
    }),
  );
  return { pid, times, weights, sampleNodes, side, frame };
}

/** Every profile in dir (profile.<pid>.<thread>.cpuprofile, and a worker's flushes, profile.<pid>.<thread>-<n>.cpuprofile), threads of a process together. */
export function readProfiles(dir: string, root = '.'): ThreadProfile[] {
  if (!existsSync(dir)) return [];
  const product = productPackages(root);
  return readdirSync(dir)
    .map((f) => ({ f, pid: /^profile\.(\d+)\.\d+(?:-\d+)?\.cpuprofile$/.exec(f)?.[1] }))
    .filter((p) => p.pid)
    .map(({ f, pid }) => readThread(join(dir, f), Number(pid), product));
}

export interface WindowSplit {
  /** Sampled milliseconds on each side, over every thread of the process. */
  ms: Record<Side, number>;
  /** Self time per function (name and place), with its side. */
  self: Map<string, { side: Side; ms: number }>;
}

/** What one process's threads were doing between two instants. */
export function splitWindow(threads: ThreadProfile[], pid: number, fromUs: number, toUs: number, rule: PackageRule = 'gateway'): WindowSplit {
  const ms: Record<Side, number> = { product: 0, stand_in: 0, unattributed: 0, idle: 0 };
  const self = new Map<string, { side: Side; ms: number }>();
  for (const thread of threads) {
    if (thread.pid !== pid) continue;
    for (let i = 0; i < thread.times.length; i++) {
      const t = thread.times[i]!;
      if (t < fromUs || t >= toUs) continue;
      const node = thread.sampleNodes[i]!;
      const side = thread.side[rule].get(node)!;
      const w = thread.weights[i]! / 1000;
      ms[side] += w;
      if (side === 'idle') continue;
      const f = thread.frame.get(node)!;
      const key = `${f.name}\t${f.where}\t${side}`;
      const entry = self.get(key) ?? { side, ms: 0 };
      entry.ms += w;
      self.set(key, entry);
    }
  }
  return { ms, self };
}
