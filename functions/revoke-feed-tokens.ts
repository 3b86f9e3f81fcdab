import type { ScheduledEvent } from 'aws-lambda';
import { functionStack } from '../shared/platform/function-stack';
import { revokeReplacedTokens } from '../shared/mail/feed-access';

/** Every minute: the feed tokens that rotations answered 503 for (MySQL replaced them, Redis still knew them) are revoked now. */
export const handler = functionStack<ScheduledEvent, { revoked: number }>().handler(async () => ({ revoked: await revokeReplacedTokens() }));
