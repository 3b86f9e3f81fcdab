/**
 * The walkthrough of docs/api.md as a reader runs it: every ```sh block of the page, in order, in
 * one bash with `set -euo pipefail`. Each `curl` of the page becomes a numbered step whose answer
 * must be 2xx or 3xx, or the status its comment names first, so the page cannot show a route, a
 * body or a status the code does not serve. Run against a twin by test/house/docs-walkthrough.test.ts,
 * and through the production edge by test/twin/edge.test.ts.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';

const PAGE = 'docs/api.md';
/** Where the page says the twin is: `npm start`'s gateway and SMTP listener. */
const DOCUMENTED_GATEWAY = 'localhost:3000';
const DOCUMENTED_SMTP = 'smtp://127.0.0.1:2525';
/** Far beyond what the walkthrough takes (seconds); it waits on mail being filed, never on a clock. */
export const GIVE_UP_MS = 240_000;

interface Step {
  n: number;
  /** The command as the page writes it, for the failure message. */
  command: string;
  /** The status the page names for it, if any; otherwise any 2xx or 3xx. */
  expect?: number;
}

/**
 * A status a comment names first: at its start (`# 202 {orderId…}`) or after a label and a colon
 * (`# sign up: 201 {…}`); `# the signed-in user, or 401` names none.
 */
function statusNamedIn(comment: string | undefined): number | undefined {
  const match = comment && /^\s*(?:[^:{(]*:\s*)?([1-5]\d\d)\b/.exec(comment);
  return match ? Number(match[1]) : undefined;
}

/** The comment a command ends with, after ` # ` (the page's curl lines hold no ` # ` of their own). */
const trailingComment = (line: string) => / #\s(.*)$/.exec(line)?.[1];

/**
 * curl as the page runs it, its output unchanged, each answer's status written to $SURGE_STEPS and
 * checked: a status other than the one expected fails the step, and `set -e` the walkthrough.
 */
const CURL_STEP = String.raw`set -euo pipefail
curl() {
  local body code exit=0
  body=$(mktemp)
  code=$(command curl -sS -o "$body" -w '%{http_code}' "$@") || exit=$?
  cat "$body"
  rm -f "$body"
  echo "$SURGE_STEP $code" >> "$SURGE_STEPS"
  if (( exit != 0 )); then return "$exit"; fi
  if [[ -n $SURGE_EXPECT ]]; then [[ $code == "$SURGE_EXPECT" ]]; else (( code >= 200 && code < 400 )); fi
}`;

/**
 * The page's ```sh blocks as one bash script whose every `curl` is a numbered step (`SURGE_STEP=n
 * SURGE_EXPECT=s curl …`, run by the `curl` function of CURL_STEP), the twin's addresses put for the
 * documented ones.
 */
export function walkthrough(markdown: string, gateway: string, smtpPort: number): { script: string; steps: Step[]; gatewayMentions: number } {
  const steps: Step[] = [];
  const blocks = [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!.split('\n'));
  const script = blocks.map((lines) =>
    lines
      .map((line, i) => {
        if (line.trimStart().startsWith('#') || !/(^\s*|\$\(|\buntil\s+)curl\s/.test(line)) return line;
        // The command's last line (its trailing comment) and the comment block above its first.
        let last = i;
        while (lines[last]!.endsWith('\\')) last += 1;
        let above = i;
        while (above > 0 && lines[above - 1]!.trimStart().startsWith('#')) above -= 1;
        const expected = statusNamedIn(trailingComment(lines[last]!)) ?? (above < i ? statusNamedIn(lines[above]!.replace(/^\s*#/, '')) : undefined);
        const step: Step = { n: steps.length + 1, command: lines.slice(i, last + 1).join('\n'), ...(expected ? { expect: expected } : {}) };
        steps.push(step);
        return line.replace(/(^\s*|\$\(|\buntil\s+)curl\s/, `$1SURGE_STEP=${step.n} SURGE_EXPECT=${expected ?? ''} curl `);
      })
      .join('\n'),
  );
  const addressed = script.join('\n').replaceAll(DOCUMENTED_GATEWAY, gateway).replaceAll(DOCUMENTED_SMTP, `smtp://127.0.0.1:${smtpPort}`);
  // Each curl names the gateway or the SMTP listener once: as many steps as mentions outside comments, or one was missed.
  const commands = blocks
    .flat()
    .filter((line) => !line.trimStart().startsWith('#'))
    .join('\n');
  const gatewayMentions = commands.split(DOCUMENTED_GATEWAY).length - 1 + commands.split(DOCUMENTED_SMTP).length - 1;
  return { script: `${CURL_STEP}\n${addressed}`, steps, gatewayMentions };
}

interface Run {
  exitCode: number | null;
  transcript: string;
  /** Each curl that answered, in order: its step and status. */
  answered: { n: number; status: number }[];
}

/** Runs the script in a directory of its own (the page's cookie jars go there), killing it and what it started once GIVE_UP_MS have passed. */
export async function runInBash(script: string): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'surge-walkthrough-'));
  const stepsFile = join(dir, 'steps');
  try {
    const child = spawn('bash', ['-c', script], {
      cwd: dir,
      detached: true,
      // In a directory of its own, as the page says a reader may: nothing of the project's is at hand there.
      env: { ...process.env, SURGE_STEPS: stepsFile },
    });
    let transcript = '';
    child.stdout.on('data', (chunk: Buffer) => (transcript += chunk));
    child.stderr.on('data', (chunk: Buffer) => (transcript += chunk));
    const giveUp = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // The group ended meanwhile.
      }
    }, GIVE_UP_MS);
    const exitCode = await new Promise<number | null>((done) => child.on('close', done));
    clearTimeout(giveUp);
    let log = '';
    try {
      log = readFileSync(stepsFile, 'utf8');
    } catch {
      // No curl answered at all.
    }
    const answered = log
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [n, status] = line.split(' ').map(Number);
        return { n: n!, status: status! };
      });
    return { exitCode, transcript, answered };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs the page's walkthrough against a twin's gateway (or edge) and SMTP listener, and holds every curl to the status the page names. */
export async function runWalkthrough(twin: { url: string; smtpUrl: string }): Promise<void> {
  // Prepare
  const page = readFileSync(PAGE, 'utf8');
  const { script, steps, gatewayMentions } = walkthrough(page, new URL(twin.url).host, Number(new URL(twin.smtpUrl).port));

  // Act
  const run = await runInBash(script);

  // Assess
  const last = run.answered.at(-1);
  const failed = last && steps[last.n - 1];
  const why = `the walkthrough failed${failed ? `; the last curl to answer was step ${failed.n} (HTTP ${last.status}, expected ${failed.expect ?? '2xx or 3xx'}):\n${failed.command}` : ''}\n--- its output, last lines ---\n${run.transcript.split('\n').slice(-40).join('\n')}`;
  expect(run.exitCode, why).toBe(0);
  // Every curl of the page ran, and answered as expected.
  expect(steps.length).toBe(gatewayMentions);
  expect(new Set(run.answered.map((a) => a.n))).toEqual(new Set(steps.map((s) => s.n)));
  for (const { n, status } of run.answered) {
    const step = steps[n - 1]!;
    if (step.expect) expect(status, step.command).toBe(step.expect);
    else expect(status, step.command).toBeLessThan(400);
  }
}
