import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import { db } from '../platform/clients/mysql';
import { readyConnections, redis } from '../platform/clients/redis';
import { inTransaction } from '../platform/db/transaction';
import { faultPoint } from '../platform/faults';
import { loggableError, logger } from '../platform/logger';
import { count, timing } from '../platform/metrics';
import {
  CORRELATION_ATTRIBUTE,
  decodeCorrelationIds,
  decodeHandOffs,
  handOffMessage,
  handOffVersionOf,
  READABLE_HAND_OFF_VERSIONS,
  VERSION_ATTRIBUTE,
} from './hand-off';
import type { ReservationKind } from './kind';
import { lockedStates, recordStored, type StoredState } from './ledger';
import { repairOwner } from './reconcile';

/** Groups records by their owner, so each owner's keys are touched once. */
function groupBy<T>(records: T[], ownerOf: (record: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const record of records) {
    const owner = ownerOf(record);
    const group = groups.get(owner);
    if (group) group.push(record);
    else groups.set(owner, [record]);
  }
  return groups;
}

/** Thrown inside the first attempt's transaction, to roll it back, when a record already had a decision. */
class AlreadyDecided extends Error {}

/**
 * One transaction: the owners' rows are locked first (in id order, so writers cannot deadlock), so
 * the guard sees every committed write. Where the kind can, the records are first stored as if none
 * had a decision (storeUndecided: one statement fewer), and that transaction rolled back if one had;
 * then, or else, the decisions' rows for these ids are locked too, so the duplicate check sees every
 * committed decision: records already decided are left alone (a duplicate delivery, a
 * cancellation), the rest stored under the kind's guard and their decision recorded.
 * Returns the decision that stands for each id; what it decided is counted once committed.
 */
async function storeBatch<R>(kind: ReservationKind<R>, records: R[]): Promise<Map<string, string>> {
  const owners = [...new Set(records.map(kind.ownerOf))].sort();
  // Ids in code-unit order, as the owners are, so that concurrent writers take rows' locks in one
  // order; localeCompare's collation cost more than any other line of the writer's own code.
  const byId = (a: R, b: R) => (kind.idOf(a) < kind.idOf(b) ? -1 : 1);
  let stored = new Map<string, StoredState>();
  let decisions: Map<string, string> | undefined;
  if (kind.storeUndecided) {
    const storeUndecided = kind.storeUndecided.bind(kind);
    const bridge = kind.decisions.bridge;
    decisions = await inTransaction(db(), async (conn) => {
      const locked = await kind.lockOwners(conn, owners);
      // The release before decides in the bridge's table alone: a decision there is one too.
      if (bridge && (await lockedStates(conn, bridge, records.map(kind.idOf))).size) throw new AlreadyDecided();
      const states = await storeUndecided(conn, [...records].sort(byId), locked);
      if (!states) throw new AlreadyDecided();
      await recordStored(conn, kind.decisions, records, states, kind.idOf);
      stored = states;
      return new Map<string, string>(states);
    }).catch((error: unknown) => {
      if (error instanceof AlreadyDecided) return undefined;
      throw error;
    });
  }
  decisions ??= await inTransaction(db(), async (conn) => {
    const locked = await kind.lockOwners(conn, owners);
    const decided = await lockedStates(conn, kind.decisions, records.map(kind.idOf));
    const undecided = records
      .filter((r) => {
        const state = decided.get(kind.idOf(r));
        return state === undefined || state === 'promised';
      })
      .sort(byId);
    stored = undecided.length ? await kind.store(conn, undecided, locked) : new Map();
    await recordStored(conn, kind.decisions, undecided, stored, kind.idOf);
    return new Map<string, string>([...decided, ...stored]);
  });
  countStored(kind, records, stored);
  return decisions;
}

/**
 * The writer's lag (reserved in Redis → committed here) of the oldest record a batch confirmed —
 * one value per batch, the lag an operator watches; one per record took 6 % of the writer's CPU
 * in a profile (Powertools reads the environment for every value it adds) — and the guard's
 * rejections.
 */
function countStored<R>(kind: ReservationKind<R>, records: R[], stored: Map<string, StoredState>): void {
  let oldest: number | undefined;
  for (const record of records) {
    const state = stored.get(kind.idOf(record));
    if (state === 'confirmed') oldest = Math.min(oldest ?? Infinity, kind.reservedAtOf(record));
    else if (state === 'rejected') count(`${kind.name}.guardRejected`, 1, { urgent: true }); // alarmed: GuardRejections
  }
  if (oldest !== undefined) timing(`${kind.name}.writerLag`, Date.now() - oldest);
}

/** The ids among these (of one outbox) whose outbox entry is missing; undefined when Redis could not tell. */
async function missingFromOutbox(outbox: string, ids: string[]): Promise<Set<string> | undefined> {
  try {
    const entries = await redis().hmget(outbox, ...ids);
    return new Set(ids.filter((_, i) => entries[i] === null));
  } catch (error) {
    logger.warn(`Could not read the outbox ${outbox}; storing its reservations all the same`, { error: loggableError(error) });
    return undefined;
  }
}

/** The connection (by readyConnections) on which each owner was last looked at. */
const lookedAtOn = new Map<string, number>();

/**
 * Owners to look at now: those whose records were stored with no outbox entry (Redis lost their
 * reservations), and those not looked at since the connection was last made. A failover can lose
 * reservations the writer already stored (with their settles): nothing else would tell, and
 * every unit lost is sold again until the counter is repaired.
 */
function ownersToRepair(kindName: string, owners: Iterable<string>, lost: Set<string>): string[] {
  const connection = readyConnections();
  return [...owners].filter((owner) => {
    const key = `${kindName} ${owner}`;
    const due = lost.has(owner) || lookedAtOn.get(key) !== connection;
    lookedAtOn.set(key, connection);
    return due;
  });
}

export interface WriteResult {
  /** Ids that could not be stored, to be retried by the queue. */
  failed: Set<string>;
  /** Stored although Redis had no outbox entry for them: Redis lost writes. */
  storedWithoutOutbox: number;
  /** The decision that stands for each id written (confirmed, rejected, cancelled). */
  decisions: Map<string, string>;
}

/**
 * The writer's whole job for one kind: store every record it receives, under the database guard,
 * unless the ledger says it was cancelled (a missing outbox entry is not a cancellation: Redis may
 * have lost it); fall back to one at a time if the batch fails; clear what was decided from the
 * outbox. Records stored with no outbox entry mean Redis lost writes for that owner: they are
 * counted, logged, and the owner repaired at once, before Redis sells those units again; so is
 * every owner first seen on a new connection.
 */
export async function writeReservations<R>(kind: ReservationKind<R>, records: R[]): Promise<WriteResult> {
  const unique = [...new Map(records.map((r) => [kind.idOf(r), r])).values()];
  if (unique.length === 0) return { failed: new Set(), storedWithoutOutbox: 0, decisions: new Map() };
  const owners = groupBy(unique, kind.ownerOf);
  // One outbox per owner, or per bucket of an owner split into several.
  const outboxes = groupBy(unique, (r) => kind.keysOfRecord(r).outbox);
  const missing = new Map(
    await Promise.all([...outboxes].map(async ([outbox, group]) => [outbox, await missingFromOutbox(outbox, group.map(kind.idOf))] as const)),
  );

  const failed = new Set<string>();
  let decisions: Map<string, string>;
  try {
    decisions = await storeBatch(kind, unique);
  } catch (error) {
    logger.warn(`Batch of ${kind.name} failed; storing one by one`, { count: unique.length, error: loggableError(error) });
    decisions = new Map();
    for (const record of unique) {
      try {
        for (const [id, state] of await storeBatch(kind, [record])) decisions.set(id, state);
      } catch (single) {
        logger.error(`One of the ${kind.name} could not be stored`, { id: kind.idOf(record), error: loggableError(single) });
        failed.add(kind.idOf(record));
      }
    }
  }
  faultPoint('writer-after-commit');

  const lostOwners = new Set<string>();
  let storedWithoutOutbox = 0;
  await Promise.all(
    [...owners].map(async ([owner, group]) => {
      const lost = group.filter((r) => missing.get(kind.keysOfRecord(r).outbox)?.has(kind.idOf(r)) && isStored(decisions.get(kind.idOf(r))));
      if (lost.length) {
        storedWithoutOutbox += lost.length;
        lostOwners.add(owner);
      }
      const rejected = group.filter((r) => decisions.get(kind.idOf(r)) === 'rejected');
      if (rejected.length && kind.forgetRejected)
        await kind.forgetRejected(owner, rejected).catch((error: unknown) => {
          logger.warn(`Could not forget rejected ${kind.name} of ${owner} in Redis`, { error: loggableError(error) });
        });
    }),
  );
  await Promise.all(
    [...outboxes].map(async ([outbox, group]) => {
      // A cancelled entry still in the outbox is its compensation's (or reconciliation's) to give back.
      const settled = group.map(kind.idOf).filter((id) => isStored(decisions.get(id)));
      if (settled.length)
        await redis()
          .hdel(outbox, ...settled)
          .catch((error: unknown) => {
            logger.warn(`Could not clear stored ${kind.name} from the outbox ${outbox}; reconciliation will`, { error: loggableError(error) });
          });
    }),
  );
  // Alarmed (StoredWithoutOutbox) when above 0; the zero of every batch may wait for the next line.
  count(`${kind.name}.storedWithoutOutbox`, storedWithoutOutbox, { urgent: storedWithoutOutbox > 0 });
  if (storedWithoutOutbox) {
    logger.error(`Stored ${kind.name} that Redis had no outbox entry for: Redis lost writes`, { count: storedWithoutOutbox, owners: [...lostOwners] });
  }
  for (const owner of ownersToRepair(kind.name, owners.keys(), lostOwners)) {
    const report = await repairOwner(kind, owner).catch((error: unknown) => {
      logger.error(`Repair of ${owner} failed`, { error: loggableError(error) });
      lookedAtOn.delete(`${kind.name} ${owner}`);
    });
    if (report?.adjusted || report?.rebuilt) logger.error(`Repaired ${owner}: Redis had lost writes`, { ...report });
  }
  return { failed, storedWithoutOutbox, decisions };
}

const isStored = (state: string | undefined) => state === 'confirmed' || state === 'rejected';

/**
 * The most decisions one line carries: an entry is at most 236 characters (a 96-character id, a
 * 128-character correlation id as the API takes them), so a line is at most about 59 KB, below the
 * 256 KB past which Lambda's log capture splits a line, and a split line is no longer JSON. On
 * Lambda a reserving function's instance serves one request at a time, so each message carries one
 * reservation and a batch of at most 100 messages (functions/table.ts) fits in one line; where one
 * process serves many requests (the twin), the sender packs up to 25 in a message and a batch takes
 * a line per 250.
 */
const DECISIONS_PER_LINE = 250;

/**
 * Logs a batch's decisions in one line (see DECISIONS_PER_LINE), not one a reservation: at thousands
 * of orders a second each line is CloudWatch Logs ingestion. Nor a JSON field a reservation: Logs
 * Insights discovers and parses at most 200 fields of a line. Each kind's decisions are one string of
 * entries `<id>=<state>@<correlation id>` separated by spaces (a relayed reservation has no correlation
 * id, nor `@…`), so either id finds its line with `filter @message like` (the queries: docs/runbook.md).
 * The correlation ids are on the line, not appended to the logger, which the twin's concurrent batches share.
 */
function logDecisions(decisionsByKind: [kind: string, decisions: Map<string, string>][], correlationIds: Map<string, string>): void {
  const entries = decisionsByKind.flatMap(([kind, decisions]) =>
    [...decisions].map(([id, state]) => {
      const correlationId = correlationIds.get(id);
      return { kind, entry: correlationId ? `${id}=${state}@${correlationId}` : `${id}=${state}` };
    }),
  );
  for (let from = 0; from < entries.length; from += DECISIONS_PER_LINE) {
    const decisions: Record<string, string> = {};
    for (const { kind, entry } of entries.slice(from, from + DECISIONS_PER_LINE)) decisions[kind] = decisions[kind] ? `${decisions[kind]} ${entry}` : entry;
    logger.info('Reservations decided', { decisions });
  }
}

/**
 * The reservation queue's consumer for the kinds given: stores the orders and coupons reserved in
 * Redis, all of a batch's of each kind together. A malformed record fails alone (and reaches the
 * DLQ after its receives run out) without holding back the rest of its batch; a record with a
 * reservation that could not be written is retried whole, and its siblings already written are
 * then recognised in the ledger and not stored twice. The batch's decisions are logged together,
 * each with the correlation id of the request that made the reservation (see logDecisions).
 * A message of a hand-off version this writer does not read (a newer release's, while a deploy
 * shifts) is parked with its reason by `park` (the dead-letter queue), never read as if it were
 * one it knows nor dropped; if parking fails it stays on the queue.
 */
export function reservationWriter(
  kinds: readonly ReservationKind<unknown>[],
  park: (record: SQSRecord, reason: string) => Promise<void>,
): (records: SQSRecord[]) => Promise<SQSBatchResponse> {
  const message = handOffMessage(kinds);
  return async (records) => {
    const failures = new Set<string>();
    const messagesOf = new Map<string, string[]>();
    const correlationIds = new Map<string, string>();
    const readable: SQSRecord[] = [];
    await Promise.all(
      records.map(async (record) => {
        const attribute = record.messageAttributes?.[VERSION_ATTRIBUTE]?.stringValue;
        const version = handOffVersionOf(attribute);
        if (version !== undefined && READABLE_HAND_OFF_VERSIONS.includes(version)) return void readable.push(record);
        const reason = `hand-off version ${JSON.stringify(attribute)} is not one this writer reads (${READABLE_HAND_OFF_VERSIONS.join(', ')})`;
        logger.error('Parking a hand-off message of a version this writer does not read', { messageId: record.messageId, version: attribute });
        count('reservations.parked', 1, { urgent: true });
        await park(record, reason).catch((error: unknown) => {
          logger.error('Could not park the message; it stays on the queue', { messageId: record.messageId, error: loggableError(error) });
          failures.add(record.messageId);
        });
      }),
    );
    for (const record of readable) decodeCorrelationIds(record.messageAttributes?.[CORRELATION_ATTRIBUTE]?.stringValue, correlationIds);
    const messages = readable.flatMap((record) => {
      const parsed = decodeHandOffs(message, record.body);
      if (parsed.success) return [{ messageId: record.messageId, body: parsed.data }];
      logger.error('Malformed hand-off message', { messageId: record.messageId, issues: parsed.error.issues.length });
      failures.add(record.messageId);
      return [];
    });
    const write = <R>(kind: ReservationKind<R>) => {
      const batch = messages.flatMap(({ messageId, body }) =>
        (body[kind.name] as R[]).map((record) => {
          const id = kind.idOf(record);
          messagesOf.set(id, [...(messagesOf.get(id) ?? []), messageId]);
          return record;
        }),
      );
      return writeReservations(kind, batch);
    };
    const results = await Promise.all(kinds.map((kind) => write(kind)));
    for (const id of results.flatMap((r) => [...r.failed])) for (const messageId of messagesOf.get(id)!) failures.add(messageId);
    logDecisions(
      kinds.map((kind, i) => [kind.name, results[i]!.decisions]),
      correlationIds,
    );
    return { batchItemFailures: [...failures].map((itemIdentifier) => ({ itemIdentifier })) };
  };
}
