import middy from '@middy/core';
import type { SESEvent } from 'aws-lambda';
import { inboundDomainEnv, rawMailEnv, readEnv } from '../shared/config';
import { findOrCreateNewsletter } from '../shared/mail/newsletters';
import { mailReceiver } from '../shared/mail/receive';
import * as z from '../shared/zod';

const { INBOUND_DOMAIN, RAW_MAIL_BUCKET, RAW_MAIL_PREFIX } = readEnv(z.extend(inboundDomainEnv, rawMailEnv.shape));

export const handler = middy<SESEvent, void>().handler(
  mailReceiver({ domain: INBOUND_DOMAIN, bucket: RAW_MAIL_BUCKET, prefix: RAW_MAIL_PREFIX, resolveNewsletter: findOrCreateNewsletter }),
);
