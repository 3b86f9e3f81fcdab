import { inboundDomainEnv, readEnv } from '../shared/platform/config';
import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { inboxTokenFor } from '../shared/mail/addresses';
import { inboxAddress } from '../shared/mail/inbox-token';

const { INBOUND_DOMAIN } = readEnv(inboundDomainEnv);

export const handler = api({ access: 'user' }).handler(async ({ principal }) =>
  json(200, { address: inboxAddress(await inboxTokenFor(principal.userId), INBOUND_DOMAIN) }),
);
