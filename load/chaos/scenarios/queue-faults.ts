/**
 * The functions' sends to SQS failing mid-sale, through a fault proxy between them and the queue
 * (infra/twin/faults/queue-fault-proxy.ts; the pollers read from the emulator itself): for the length
 * of the fault, a share of the SendMessageBatch calls is reset before it reaches the queue, a share
 * reaches it and its reply is lost (the sender times out on an outcome it cannot know), and a share
 * reaches it only after the function's timeout. Buyers retry 503s with their keys. Every
 * acknowledged order must be stored once, and nothing sold twice.
 */
import { startEmulator } from '../../../infra/twin/services/services';
import { startQueueFaultProxy, type QueueFaultProxy, type QueueFaultShares } from '../../../infra/twin/faults/queue-fault-proxy';
import { until } from '../../../shared/platform/wait';
import { runScenario, stateDirOf } from '../harness';
import type { ChaosOptions, ChaosReport } from '../report';

/** Past create-order's 10 s timeout, so a delayed send lands after its function gave up. */
const DELAY_MS = 12_000;
const SHARES: QueueFaultShares = { reset: 0.2, 'reply-lost': 0.2, delayed: 0.2 };
/**
 * Only decides when to give up on a fault that has not fired: each kind fires within seconds of
 * the sale's first send, as a faulted send's buyers retry and so send again.
 */
const FIRED_WITHIN_MS = 120_000;

const everyFaultFired = (proxy: QueueFaultProxy) => proxy.counts.reset > 0 && proxy.counts['reply-lost'] > 0 && proxy.counts.delayed > 0;

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
        // From the first order: the buyers' count of acknowledged orders trails the sends (one send
        // carries many orders), so a fault armed after some of them may find no send left to fail.
        faultAfter: 0,
        async fault({ options: { log } }) {
          proxy.setShares(SHARES);
          log(`queue sends failing for ${faultMs / 1000} s and until each kind has fired: ${JSON.stringify(SHARES)}`);
          const armed = Date.now();
          // Not thrown: the report says which fault never fired (every_fault_fired).
          await until(async () => everyFaultFired(proxy) && Date.now() - armed >= faultMs, FIRED_WITHIN_MS, 'every queue fault fired').catch((error: Error) =>
            log(error.message),
          );
          proxy.setShares({});
          // Over once the last delayed send has reached the queue, late, as its message would on AWS.
          await until(async () => proxy.held === 0, DELAY_MS + FIRED_WITHIN_MS, 'every delayed send on the queue').catch((error: Error) => log(error.message));
        },
        assess() {
          const counts = { ...proxy.counts };
          return {
            // A scenario whose faults never fired proves nothing.
            invariants: { every_fault_fired: everyFaultFired(proxy) },
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
