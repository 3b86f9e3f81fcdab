/**
 * One order reserved by a process of its own, so a test can kill it at a fault point
 * (SURGE_FAULTS) between two steps no outside process could time: `node --import tsx
 * test/support/reserve-in-child.ts <item id> <user id>`. Prints the reservation as JSON.
 */
import { redis } from '../../shared/platform/clients/redis';
import { reserve } from '../../shared/sale/orders/sale';
import { LOCAL_SOURCE } from '../../infra/twin/load-test-sources';

const [itemId, userId] = process.argv.slice(2);
const reserved = await reserve({ itemId: itemId!, userId: Number(userId), quantity: 1, idempotencyKey: `child-${userId}`, source: LOCAL_SOURCE });
process.stdout.write(`${JSON.stringify(reserved)}\n`);
redis().disconnect();
