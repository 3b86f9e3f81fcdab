/**
 * The prod shape's synthesized template, which the twin's edge is built from: synthesized on
 * demand (infra/twin/edge/synth.ts, in a process of its own) and kept under the state directory,
 * named by a hash of the stack's sources, so a start reuses it while they are unchanged.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../', import.meta.url));
/** What the template is made from: the stack, the table and entries it reads, their dependencies' versions and cdk.json's flags. */
const SOURCES = ['infra', 'functions', 'shared', 'cdk.json', 'package-lock.json'];
/** The twin's edge stands for the prod stage's distribution, CloudFront being prod's default. */
export const EDGE_CONTEXT = { stage: 'prod', inboundDomain: 'inbound.surge.test' } as const;

function filesUnder(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { withFileTypes: true }).flatMap((entry) => (entry.name === 'node_modules' ? [] : filesUnder(join(path, entry.name))));
}

/** A hash of every source file's path and content: a new one after any change to what the synth reads. */
export function stackSourcesHash(): string {
  const hash = createHash('sha256').update(JSON.stringify(EDGE_CONTEXT));
  for (const file of SOURCES.flatMap((source) => filesUnder(join(root, source))).sort()) {
    hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * The template of the prod stack (Surge-prod.template.json), synthesized into
 * <dir>/<sources hash>/ unless it is there already; older ones are removed.
 */
export async function prodTemplate(dir: string): Promise<{ file: string; template: CfnTemplate }> {
  const hash = stackSourcesHash();
  const out = join(dir, hash);
  const file = join(out, 'Surge-prod.template.json');
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    const part = `${out}.${process.pid}.part`;
    rmSync(part, { recursive: true, force: true });
    await synthInto(part);
    for (const old of readdirSync(dir)) if (old !== hash && !old.endsWith('.part')) rmSync(join(dir, old), { recursive: true, force: true });
    // Whole or not at all: twins starting side by side (the tests) never read half a template, and
    // of two that synthesized at once, the second finds the first's in place and drops its own.
    try {
      renameSync(part, out);
    } catch (error) {
      if (!existsSync(file)) throw error;
    }
    rmSync(part, { recursive: true, force: true });
  }
  return { file, template: JSON.parse(readFileSync(file, 'utf8')) as CfnTemplate };
}

function synthInto(outdir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'infra/twin/edge/synth.ts'), outdir], {
      cwd: root,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`The twin's edge could not synthesize the prod stack (exit ${code}): ${stderr.slice(-2000)}`)),
    );
  });
}

/** A CloudFormation template, as far as the edge reads one. */
export interface CfnTemplate {
  Resources: Record<string, { Type: string; Properties: Record<string, any> }>;
}
