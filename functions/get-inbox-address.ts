import { inboundDomainEnv, readEnv } from '../shared/platform/config';
import { once } from '../shared/platform/once';
import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { inboxTokenFor } from '../shared/mail/addresses';
import { inboxAddress } from '../shared/mail/inbox-token';

const inboundDomain = once(() => readEnv(inboundDomainEnv).INBOUND_DOMAIN);

export const handler = api({ access: 'user' }).handler(async ({ principal }) => {
  // Read before the token is touched, so a function without its domain changes nothing.
  const domain = inboundDomain();
  return json(200, { address: inboxAddress(await inboxTokenFor(principal.userId), domain) });
});
