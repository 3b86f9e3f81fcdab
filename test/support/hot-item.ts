import type { Command } from 'ioredis';
import { redis } from '../../shared/platform/clients/redis';
import { isDependencyUnavailable } from '../../shared/platform/errors';
import { type Answer } from '../../load/support/false-sold-out';
import type { OrderRecord } from '../../shared/sale/orders/model';
import { reserve, type ReservationRequest } from '../../shared/sale/orders/sale';

/** How often a buyer asks again after Redis answered too late, before its answer counts as failed. */
const CLIENT_RETRIES = 3;

/**
 * One buyer's reservation as a client makes it: when Redis did not answer in time (an overloaded
 * machine; the API's retry-safe 503), it asks again with the same Idempotency-Key, which learns
 * what the earlier ask did, up to CLIENT_RETRIES times. The outcome is 'reserved' (with the
 * record) or the error's code (its message when it has none); `retried` says how often it asked again.
 */
export async function reserveAsClient(request: ReservationRequest): Promise<{ outcome: string; record?: OrderRecord; retried: number }> {
  for (let retried = 0; ; retried++) {
    try {
      return { outcome: 'reserved', record: (await reserve(request)).record, retried };
    } catch (error) {
      if (isDependencyUnavailable(error) && retried < CLIENT_RETRIES) continue;
      const { code, message } = error as { code?: string; message: string };
      return { outcome: code ?? message, retried };
    }
  }
}

/**
 * Runs `meanwhile` before each of one buyer's reserving script calls after its first (those that
 * follow a refill), found by the buyer's idempotency record among the call's keys, and sends the
 * call once it is done: what another buyer's request landing between a refill and the reservation
 * after it does now and then on a busy machine, made to happen every time. Returns what undoes it.
 */
export function beforeReservingAgain(idempotencyRecord: string, meanwhile: () => Promise<unknown>): () => void {
  const client = redis() as unknown as { sendCommand: (command: Command, ...rest: unknown[]) => unknown };
  const send = client.sendCommand;
  let calls = 0;
  client.sendCommand = (command: Command, ...rest: unknown[]) => {
    if (!command.getKeys().includes(idempotencyRecord) || calls++ === 0) return send.call(client, command, ...rest);
    return meanwhile().then(() => send.call(client, command, ...rest));
  };
  return () => {
    client.sendCommand = send;
  };
}
