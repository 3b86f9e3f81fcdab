/**
 * What handing reservations to the queue costs a function per reservation, in the two shapes an
 * instance sends them: one reservation per SendMessageBatch, as an instance of Lambda's default
 * compute sends (one invocation at a time, so BatchedSender has only its own to send), or an
 * environment of Managed Instances with one order in flight; and RESERVATIONS_PER_TURN sent in one
 * turn of the event loop, as the twin's shared instance, or a busy environment, coalesces its
 * concurrent requests' into one call. The orders bench's product CPU is measured in the second
 * shape; this says how far the first is from it. Measured in the bench's
 * own process (the same sender and signed requester the functions use), against a queue of its
 * own on the twin's emulator, the CPU of the process per reservation sent.
 */
import { sqsCall } from '../../shared/platform/clients/sqs-calls';
import { BatchedSender } from '../../shared/platform/queue/batched-sender';
import { encodeHandOffs, type HandOff } from '../../shared/reservations/hand-off';
import { round } from './round';

const RESERVATIONS_PER_TURN = 25;
const WARM_UP = 1_000;
const MEASURED = 2_000;

const handOff = (i: number): HandOff => ({
  kind: 'orders',
  record: { orderId: `hand-off-cost-${i}`, itemId: 'hand-off-cost', userId: i + 1, quantity: 1, reservedAt: Date.now(), idempotencyKey: `k${i}` },
  correlation: { id: `hand-off-cost-${i}`, correlationId: `hand-off-cost-${i}` },
});

export async function handOffCpuPerReservation() {
  const call = sqsCall();
  const { QueueUrl } = await call<{ QueueUrl: string }>('CreateQueue', { QueueName: `bench-hand-off-cost-${Date.now()}` });
  const sender = new BatchedSender<HandOff>(call, { queueUrl: QueueUrl, timeoutMs: 3_000, itemsPerMessage: 25, encode: encodeHandOffs });
  const cpuMsPerReservation = async (count: number, perTurn: number) => {
    const before = process.cpuUsage();
    for (let i = 0; i < count; i += perTurn) await Promise.all(Array.from({ length: perTurn }, (_, j) => sender.send(handOff(i + j))));
    const used = process.cpuUsage(before);
    return (used.user + used.system) / 1000 / count;
  };
  await cpuMsPerReservation(WARM_UP, 1);
  await cpuMsPerReservation(WARM_UP * RESERVATIONS_PER_TURN, RESERVATIONS_PER_TURN);
  // A B B A, so that neither shape gains from the machine's drift.
  const one = [await cpuMsPerReservation(MEASURED, 1)];
  const shared = [await cpuMsPerReservation(MEASURED * RESERVATIONS_PER_TURN, RESERVATIONS_PER_TURN)];
  shared.push(await cpuMsPerReservation(MEASURED * RESERVATIONS_PER_TURN, RESERVATIONS_PER_TURN));
  one.push(await cpuMsPerReservation(MEASURED, 1));
  await call('DeleteQueue', { QueueUrl });
  const mean = (values: number[]) => round(values.reduce((sum, v) => sum + v, 0) / values.length, 4);
  return {
    one_per_call_ms: mean(one),
    shared_turn_ms: mean(shared),
    extra_ms_per_order_sent_alone: round(mean(one) - mean(shared), 4),
    method: `CPU of the bench's process per reservation handed off (BatchedSender, signed SendMessageBatch to the emulator): one per call, as an instance of Lambda's default compute sends, against ${RESERVATIONS_PER_TURN} in one turn, as the twin's shared instance coalesces them; A B B A, ${MEASURED} calls one at a time`,
  };
}
