import { UnavailableError } from '../platform/errors';
import { loggableError, logger } from '../platform/logger';
import { count } from '../platform/metrics';
import type { ReservationKind } from './kind';
import { decideFirst } from './ledger';
import { luaScript } from '../platform/redis/script';
import { redis } from '../platform/clients/redis';
import { heldByReplicas } from '../platform/clients/replicas';
import { reservationQueue } from './queue';

/** What a reserving script answered: a new reservation, or an earlier one that a retry found. */
export interface Reserved<R> {
  record: R;
  /** True when this answers a retry (the same Idempotency-Key, a coupon already held). */
  replayed: boolean;
  /** True while the reservation is still in the outbox, on its way to the writer. */
  pending: boolean;
  /** The connection its script went over (connectionToken, taken just before): the one its WAIT must run on. */
  connection?: unknown;
}

const stampScript = luaScript<[state: string], [now: number]>(new URL('./lua/hand-off-failed-1.lua', import.meta.url));

const retryLater = (kind: ReservationKind<unknown>) => new UnavailableError(kind.retryText);

/**
 * Undoes a reservation whose hand-off failed. The cancellation goes to the ledger first, so it
 * survives whatever Redis loses, and only then are the units given back. Returns false when a
 * decision came first (a retry was told it stands, or the writer stored it): it stands.
 */
export async function compensate<R>(kind: ReservationKind<R>, record: R): Promise<boolean> {
  if ((await decideFirst(kind.decisions, record, 'cancelled')) !== 'cancelled') return false;
  await kind.release(record);
  return true;
}

/**
 * The pipeline's first steps, after the reserving script: a new reservation's writes must be held
 * by a replica (where the deployment asks it, shared/platform/clients/replicas.ts), then it is handed
 * to the queue; should either fail it is compensated (503, retry-safe). A retry that finds its
 * reservation still pending waits for a replica likewise (the replay's script wrote, so the WAIT
 * covers the reservation whichever connection made it), promises it in the ledger, so a
 * compensation running meanwhile cannot cancel it, and answers 503 if one already did, then hands
 * it to the queue itself. Resolves when the reservation stands, is on a replica and is on its way:
 * every reservation a client is told stands has a message on the queue and survives a failover.
 * The request's correlation id travels with the reservation to the writer's log line.
 */
export async function handOff<R>(kind: ReservationKind<R>, reserved: Reserved<R>, correlationId?: string): Promise<void> {
  const id = kind.idOf(reserved.record);
  // Made only when thrown: an Error captures its stack, 13 µs of CPU per order when made for every order.
  const unavailable = () => retryLater(kind as ReservationKind<unknown>);
  const send = () => reservationQueue().send({ kind: kind.name, record: reserved.record, ...(correlationId ? { correlation: { id, correlationId } } : {}) });
  const state = kind.keysOfRecord(reserved.record).state;
  const held = () =>
    heldByReplicas(state, reserved.connection).then(
      (yes) => yes || (count(`${kind.name}.notReplicated`), false),
      () => false,
    );
  if (reserved.replayed) {
    if (!reserved.pending) return;
    if (!(await held())) throw unavailable();
    const decided = await decideFirst(kind.decisions, reserved.record, 'promised').catch((error: unknown) => {
      logger.warn(`A retry of one of the ${kind.name} could not be promised`, { id, error: loggableError(error) });
      throw unavailable();
    });
    if (decided === 'cancelled') {
      // Redis lost the release of a cancelled reservation (or its compensation died half-way).
      await kind.release(reserved.record).catch(() => undefined);
      throw unavailable();
    }
    if (decided !== 'promised') return;
    // The first request may never have sent it (Redis's answer lost, the function out of time),
    // leaving it to the relay, which sends only what the outbox still holds when it runs: a
    // failover before then loses the entry, and the promised reservation would never be stored.
    // A second message is stored once. Promised, it cannot be cancelled: a failed send is a 503,
    // and the retry sends it again.
    await send().catch((error: unknown) => {
      logger.warn(`A promised one of the ${kind.name} could not be handed off; its retry will`, { id, error: loggableError(error) });
      throw unavailable();
    });
    return;
  }
  const failure = (await held())
    ? await send().then(
        () => undefined,
        (error: unknown) => error ?? new Error('The send failed'),
      )
    : new Error('No replica held the reservation in time');
  if (failure === undefined) return;
  // Any outcome is a 503: a release known, the retry reserves anew; a compensation that failed, the
  // retry finds the reservation pending (the relay sends it later) or cancelled; a decision that came
  // first (a concurrent retry promised it), the retry answers it as that one was answered, after it
  // sent it itself: a 202 here would rest on that retry's send, which may fail too.
  const released = await compensate(kind, reserved.record).catch((error: unknown) => {
    logger.warn(`Hand-off of one of the ${kind.name} failed, and so did its compensation`, { id, error: loggableError(error) });
    throw unavailable();
  });
  logger.warn(`Hand-off of one of the ${kind.name} failed`, { id, released, error: loggableError(failure) });
  if (released) {
    count(`${kind.name}.handOffCompensated`, 1, { urgent: true }); // alarmed: HandOffFailures, which rolls a gradual deploy back
    // For a waiting room to hold its admission by (a failing checkout admits nobody more); the 503 stands whatever this does.
    await stampScript.run(redis(), [kind.keysOfRecord(reserved.record).state], [Date.now()]).catch(() => undefined);
  }
  throw unavailable();
}
