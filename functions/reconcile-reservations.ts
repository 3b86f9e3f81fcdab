import type { ScheduledEvent } from 'aws-lambda';
import { functionStack } from '../shared/platform/function-stack';
import { reconcileKinds } from '../shared/reservations/reconcile';
import { kinds } from '../shared/sale/kinds';

/** Older than this, an outbox entry's send is taken as lost and relayed. */
const RELAY_AFTER_MS = 60_000;

/**
 * Every few minutes, for every item and deal: relays lost sends, finishes cancellations, and
 * repairs what Redis lost (a drift that held across two looks, a lost sale or deal once nothing is
 * in flight, buyers' holdings). The writer repairs at once when it stores records Redis lost; this
 * catches a loss whose records were all stored before it happened (a failover's lost settles).
 */
export const handler = functionStack<ScheduledEvent, { owners: number; drifted: number }>().handler(async () => {
  const { owners, drifted } = await reconcileKinds(kinds, { relayOlderThanMs: RELAY_AFTER_MS, repair: true });
  return { owners, drifted };
});
