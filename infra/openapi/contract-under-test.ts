/**
 * The contract under test. The suite's global setup writes the OpenAPI document into a folder
 * (writeApiFiles) and names it in SURGE_CONTRACT_DIR; every process of the run (a test worker
 * calling handlers, a twin it starts, that twin's children) holds each answer of a route to that document and appends what
 * breaks it to the folder's violations file, which the global teardown reads. So a route answering
 * something undeclared fails the run whichever process answered it, and whether or not the test
 * that caused it looked at the answer.
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PUBLISHED_FILES } from '../../shared/api/published';
import { answerChecker, type AnswerCheck } from './answer-check';

export const CONTRACT_DIR_ENV = 'SURGE_CONTRACT_DIR';

const VIOLATIONS_FILE = 'contract-violations.jsonl';

/** Every violation recorded in dir during the run. */
export function contractViolations(dir: string): string[] {
  const file = join(dir, VIOLATIONS_FILE);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as string);
}

/**
 * The check of this process when the run has a contract (SURGE_CONTRACT_DIR), else undefined: the
 * problems of an answer, each also recorded for the teardown; undefined for a route the document
 * does not describe.
 */
export function contractUnderTest(): AnswerCheck | undefined {
  const dir = process.env[CONTRACT_DIR_ENV];
  if (!dir) return undefined;
  const check = answerChecker(JSON.parse(readFileSync(join(dir, PUBLISHED_FILES.document), 'utf8')));
  return (method, path, answer) => {
    const problems = check(method, path, answer);
    // One line per problem, each written whole by one append: processes of the run write side by side.
    for (const problem of problems ?? []) appendFileSync(join(dir, VIOLATIONS_FILE), `${JSON.stringify(problem)}\n`);
    return problems;
  };
}
