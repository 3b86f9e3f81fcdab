import * as z from '../platform/zod';

// Any status string is taken (SES also sends DISABLED, and may add more); only PASS passes.
const Verdict = z.object({ status: z.string().check(z.minLength(1), z.maxLength(40)) });

/** The parts of SES's receipt the gate reads; SES sends them with every receipt event. */
export const Receipt = z.object({
  recipients: z.array(z.string().check(z.maxLength(320))).check(z.minLength(1), z.maxLength(100)),
  spamVerdict: Verdict,
  virusVerdict: Verdict,
  spfVerdict: z.optional(Verdict),
  dkimVerdict: z.optional(Verdict),
  dmarcVerdict: Verdict,
  /** Present when DMARC failed: what the sender's domain asks receivers to do with such mail. */
  dmarcPolicy: z.optional(
    z.pipe(
      z.string().check(z.maxLength(40)),
      z.transform((policy) => policy.toLowerCase()),
    ),
  ),
});
export type Receipt = z.infer<typeof Receipt>;

/**
 * Whether the From domain is the sender's own: SES's DMARC PASS means SPF or DKIM passed for a
 * domain aligned with From. GRAY (no DMARC record) and FAIL under `p=none` are filed, but say
 * nothing about who wrote From.
 */
export const senderAuthenticated = (receipt: Receipt): boolean => receipt.dmarcVerdict.status === 'PASS';

export type Gate = { action: 'file' } | { action: 'quarantine'; reason: string } | { action: 'drop'; reason: string };

/**
 * What to do with a message by SES's verdicts: a virus is dropped; spam, or mail that could not
 * be checked (any status but PASS), and DMARC failures whose domain asks for reject or quarantine
 * are kept aside (quarantined, not shown in the inbox); everything else is filed.
 */
export function gate(receipt: Receipt): Gate {
  if (receipt.virusVerdict.status === 'FAIL') return { action: 'drop', reason: 'virus' };
  if (receipt.virusVerdict.status !== 'PASS') return { action: 'quarantine', reason: `virus-${receipt.virusVerdict.status.toLowerCase()}` };
  if (receipt.spamVerdict.status !== 'PASS') return { action: 'quarantine', reason: `spam-${receipt.spamVerdict.status.toLowerCase()}` };
  if (receipt.dmarcVerdict.status === 'FAIL' && (receipt.dmarcPolicy === 'reject' || receipt.dmarcPolicy === 'quarantine')) {
    return { action: 'quarantine', reason: `dmarc-${receipt.dmarcPolicy}` };
  }
  return { action: 'file' };
}
