/** A function's (or the SMTP listener's) failure, as one JSON line on stderr beside the functions' own logs. */
export function logFunctionError(functionId: string, error: Error): void {
  process.stderr.write(`${JSON.stringify({ level: 'ERROR', source: 'twin', function: functionId, message: error.message })}\n`);
}
