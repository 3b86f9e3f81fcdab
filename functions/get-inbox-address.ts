import { inboundDomainEnv, readEnv } from '../shared/platform/config';
import { once } from '../shared/platform/once';
import * as z from '../shared/platform/zod';
import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { inboxTokenFor } from '../shared/mail/addresses';
import { inboxAddress } from '../shared/mail/inbox-token';

const InboxAddress = z.strictObject({ address: z.string() });

const inboundDomain = once(() => readEnv(inboundDomainEnv).INBOUND_DOMAIN);

export const handler = api({ access: 'user', answers: { 200: InboxAddress }, errors: [] }).handler(async ({ principal }) => {
  // Read before the token is touched, so a function without its domain changes nothing.
  const domain = inboundDomain();
  return json(200, { address: inboxAddress(await inboxTokenFor(principal.userId), domain) });
});
