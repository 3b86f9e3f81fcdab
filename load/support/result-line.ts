/**
 * A run's stdout carries its one JSON result, so `… | tail -1` reads the result and nothing else.
 * Everything else this process writes to stdout from the moment this module is imported — the
 * shared clients' logs as a twin it drives goes away, a scenario's stray output — goes to stderr,
 * with its progress lines.
 */
const writeResult = process.stdout.write.bind(process.stdout);
process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;

/** Writes the run's result as the last line of stdout, and resolves once it is out. */
export function printResult(result: unknown): Promise<void> {
  return new Promise((resolve) => writeResult(`${JSON.stringify(result)}\n`, () => resolve()));
}
