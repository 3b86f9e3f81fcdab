import middy from '@middy/core';
import type { ScheduledEvent } from 'aws-lambda';
import { storeCredentials } from '../shared/platform/clients/credentials';
import { flushMetrics } from '../shared/platform/metrics';
import { logger } from '../shared/platform/logger';
import type { ReservationKind } from '../shared/reservations/kind';
import { kinds } from '../shared/sales/kinds';
import { reconcileOwner } from '../shared/reservations/reconcile';

/** Older than this, an outbox entry's send is taken as lost and relayed. */
const RELAY_AFTER_MS = 60_000;

/**
 * Every few minutes, for every item and deal: relays lost sends, finishes cancellations, and
 * repairs what Redis lost (a drift that held across two looks, a lost sale or deal once nothing is
 * in flight, buyers' holdings). The writer repairs at once when it stores records Redis lost; this
 * catches a loss whose records were all stored before it happened (a failover's lost settles).
 */
export const handler = middy<ScheduledEvent, { owners: number; drifted: number }>()
  .use(flushMetrics())
  .use(storeCredentials())
  .handler(async () => {
    let owners = 0;
    let drifted = 0;
    for (const kind of kinds as readonly ReservationKind<unknown>[]) {
      for (const owner of await kind.owners()) {
        const report = await reconcileOwner(kind, owner, { relayOlderThanMs: RELAY_AFTER_MS, repair: true });
        if (!report) continue;
        owners += 1;
        if (report.drift !== 0 && report.steady) {
          drifted += 1;
          logger.error(report.adjusted === report.drift ? 'Reservation drift repaired' : 'Reservation drift', { ...report });
        } else if (report.waiting || report.rebuilt) {
          logger.error(report.rebuilt ? 'Rebuilt a state Redis lost' : 'A state Redis lost waits to be rebuilt', { ...report });
        } else if (report.relayed > 0) {
          logger.warn('Relayed lost sends', { kind: report.kind, owner, relayed: report.relayed });
        }
      }
    }
    return { owners, drifted };
  });
