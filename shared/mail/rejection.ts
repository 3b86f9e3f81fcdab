/** Why a message was refused; stored with its outcome so a reader or operator can see it. */
export type RejectReason = 'too-large' | 'too-many-parts' | 'too-deep' | 'headers-too-large' | 'too-slow' | 'unparseable' | 'no-sender' | 'raw-message-missing';

/** A message that cannot be filed, whatever the retries: it fails alone and is recorded, never thrown further. */
export class MailRejected extends Error {
  override name = 'MailRejected';
  constructor(
    readonly reason: RejectReason,
    message: string,
  ) {
    super(message);
  }
}
