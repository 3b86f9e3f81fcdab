import { vi } from 'vitest';
import { logger } from '../../shared/platform/logger';

export interface CapturedLog {
  /** Every line printed since the capture began, raw, as CloudWatch Logs keeps each event. */
  lines(): string[];
  /** Stops capturing, and puts the logger back at the level it had. */
  stop(): void;
}

/**
 * Captures what the process prints (the logger: info on stdout, warnings and errors on stderr),
 * with the logger at INFO (the suite runs it at CRITICAL). What it captures is the test's to read
 * and is not printed: the suite's output is for its verdicts.
 */
export function captureLog(): CapturedLog {
  const printed: string[] = [];
  const spies = [process.stdout, process.stderr].map((stream) =>
    vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
      printed.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString());
      // A caller waiting for its write to be done is told it is.
      (rest.find((arg) => typeof arg === 'function') as (() => void) | undefined)?.();
      return true;
    }),
  );
  const level = logger.getLevelName();
  logger.setLogLevel('INFO');
  return {
    lines: () =>
      printed
        .join('')
        .split('\n')
        .filter((line) => line !== ''),
    stop() {
      for (const spy of spies) spy.mockRestore();
      logger.setLogLevel(level);
    },
  };
}

const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * What a Logs Insights query of docs/runbook.md finds: the first of the writer's lines (`filter
 * message = "Reservations decided"`) with `text` in it (`and @message like`), parsed with `pattern`.
 */
function query(lines: string[], text: string, pattern: RegExp): Record<string, string> | undefined {
  const line = lines.find((l) => l.includes('"message":"Reservations decided"') && l.includes(text));
  return line === undefined ? undefined : pattern.exec(line)?.groups;
}

/** A reservation's decision, as the runbook's query by id finds it; undefined when no line has it. */
export function loggedDecision(lines: string[], id: string): { state: string; correlationId?: string } | undefined {
  const found = query(lines, `${id}=`, new RegExp(`${literal(id)}=(?<state>[a-z]+)@?(?<correlationId>[^ "]*)`));
  return found && { state: found.state!, ...(found.correlationId ? { correlationId: found.correlationId } : {}) };
}

/** The reservation a request made, as the runbook's query by correlation id finds it; undefined when no line has it. */
export function loggedReservation(lines: string[], correlationId: string): { id: string; state: string } | undefined {
  const found = query(lines, `@${correlationId}`, new RegExp(`(?<id>[^ "]+)=(?<state>[a-z]+)@${literal(correlationId)}[ "]`));
  return found && { id: found.id!, state: found.state! };
}
