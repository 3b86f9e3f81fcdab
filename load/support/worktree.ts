import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * A git worktree of a commit under parentDir (<parentDir>/<short sha>), with its own dependencies
 * installed (`npm ci`), made once and reused: an earlier release's code, to run beside this one.
 */
export function worktreeOf(commit: string, parentDir: string, log: (message: string) => void): string {
  const sha = shortShaOf(commit, log);
  const dir = resolve(parentDir, sha);
  if (!existsSync(resolve(dir, 'package.json'))) {
    log(`checking out ${sha} into ${dir}`);
    execFileSync('git', ['worktree', 'add', '--force', '--detach', dir, sha], { stdio: ['ignore', 'ignore', 'inherit'] });
  }
  if (!existsSync(resolve(dir, 'node_modules'))) {
    log(`installing ${sha}'s dependencies`);
    execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--silent'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  return dir;
}

/** The commit's short sha; fetched from origin first when this clone lacks it (a shallow one). */
function shortShaOf(commit: string, log: (message: string) => void): string {
  const revParse = () => execFileSync('git', ['rev-parse', '--short', `${commit}^{commit}`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  try {
    return revParse();
  } catch {
    log(`${commit} is not in this clone; fetching it from origin`);
    execFileSync('git', ['fetch', '--quiet', 'origin', commit], { stdio: ['ignore', 'ignore', 'inherit'] });
    return revParse();
  }
}
