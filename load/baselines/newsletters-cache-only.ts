/**
 * Inbound mail as the reference team's second attempt found the newsletter: a Redis cache in front
 * of MySQL, but no lock, so every mail that misses at the same moment runs the lookup (and the
 * insert) itself. The rest of the mail function is Surge's own, so only the fill differs.
 */
import middy from '@middy/core';
import type { SESEvent } from 'aws-lambda';
import { redis } from '../../shared/platform/clients/redis';
import { readEnv, receiveMailEnv } from '../../shared/platform/config';
import { lookUpOrInsertNewsletter, newsletterCacheKey, type NewsletterResolver } from '../../shared/mail/newsletters';
import { mailReceiver } from '../../shared/mail/receive';
import { baselineMailDomain } from './mail-domain';

const { INBOUND_DOMAIN, RAW_MAIL_BUCKET, RAW_MAIL_PREFIX, MAIL_PARSER_THREADS } = readEnv(receiveMailEnv);
const TTL_SECONDS = 7 * 24 * 3600;

const cacheOnly: NewsletterResolver = async (identity) => {
  const { prefix, suffix } = newsletterCacheKey(identity);
  const key = `${prefix}cache-only:${suffix}`;
  const cached = await redis().get(key);
  if (cached !== null) return Number(cached);
  const id = await lookUpOrInsertNewsletter(identity);
  await redis().set(key, String(id), 'EX', TTL_SECONDS);
  return id;
};

export const handler = middy<SESEvent, void>().handler(
  mailReceiver({
    domain: baselineMailDomain(INBOUND_DOMAIN),
    bucket: RAW_MAIL_BUCKET,
    prefix: RAW_MAIL_PREFIX,
    resolveNewsletter: cacheOnly,
    parserThreads: MAIL_PARSER_THREADS,
  }),
);
