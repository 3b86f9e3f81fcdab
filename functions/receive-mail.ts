import { functionStack } from '../shared/platform/function-stack';
import type { SESEvent } from 'aws-lambda';
import { readEnv, receiveMailEnv } from '../shared/platform/config';
import { once } from '../shared/platform/once';
import { findOrCreateNewsletter } from '../shared/mail/newsletters';
import { mailReceiver } from '../shared/mail/receive';

const receive = once(() => {
  const { INBOUND_DOMAIN, RAW_MAIL_BUCKET, RAW_MAIL_PREFIX, MAIL_PARSER_THREADS } = readEnv(receiveMailEnv);
  return mailReceiver({
    domain: INBOUND_DOMAIN,
    bucket: RAW_MAIL_BUCKET,
    prefix: RAW_MAIL_PREFIX,
    resolveNewsletter: findOrCreateNewsletter,
    parserThreads: MAIL_PARSER_THREADS,
  });
});

export const handler = functionStack<SESEvent, void>().handler((event) => receive()(event));
