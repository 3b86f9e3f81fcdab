/**
 * The functions' sends to SQS failing mid-sale, through a fault proxy between them and the queue
 * (test/support/queue-fault-proxy.ts; the pollers read from the emulator itself): for the length
 * of the fault, a share of the SendMessageBatch calls is reset before it reaches the queue, a share
 * reaches it and its reply is lost (the sender times out on an outcome it cannot know), and a share
 * reaches it only after the function's timeout. Buyers retry 503s with their keys. Every
 * acknowledged order must be stored once, and nothing sold twice.
 */
import { startEmulator } from '../../../infra/local/services';
import { startQueueFaultProxy, type QueueFaultShares } from '../../../test/support/queue-fault-proxy';
import { runScenario, stateDirOf } from '../harness';
import type { ChaosOptions, ChaosReport } from '../report';

/** Past create-order's 10 s timeout, so a delayed send lands after its function gave up. */
const DELAY_MS = 12_000;
const SHARES: QueueFaultShares = { reset: 0.2, 'reply-lost': 0.2, delayed: 0.2 };

export async function run(options: ChaosOptions): Promise<ChaosReport> {
  const faultMs = options.scale === 'full' ? 20_000 : 5_000;
  // An emulator of the scenario's own, started before the twin so the proxy can stand in front of it.
  delete process.env.AWS_ENDPOINT_URL;
  const emulator = await startEmulator(stateDirOf('queue-faults', options));
  const proxy = await startQueueFaultProxy(emulator.url, { delayMs: DELAY_MS });
  try {
    return await runScenario(
      {
        name: 'queue-faults',
        twinEnv: () => ({ AWS_ENDPOINT_URL: emulator.url, SURGE_FUNCTIONS_SQS_ENDPOINT: proxy.url }),
        async fault({ options: { log } }) {
          proxy.setShares(SHARES);
          log(`queue sends failing for ${faultMs / 1000} s: ${JSON.stringify(SHARES)}`);
          await new Promise((r) => setTimeout(r, faultMs));
          proxy.setShares({});
          // Over once the last delayed send has reached the queue, late, as its message would on AWS.
          await new Promise((r) => setTimeout(r, DELAY_MS + 1_000));
        },
        assess() {
          const counts = { ...proxy.counts };
          return {
            // A scenario whose faults never fired proves nothing.
            invariants: { every_fault_fired: counts.reset > 0 && counts['reply-lost'] > 0 && counts.delayed > 0 },
            extra: { queue_sends: counts, fault_shares: SHARES, delay_ms: DELAY_MS },
          };
        },
      },
      options,
    );
  } finally {
    await proxy.close();
    await emulator.stop();
  }
}
