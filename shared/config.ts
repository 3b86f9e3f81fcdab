import * as z from './zod';

/** Thrown at cold start so a misconfigured function fails before it serves anything. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

const flag = z.pipe(z.enum(['true', 'false']), z.transform((v) => v === 'true'));
const seconds = z.coerce.number().check(z.int(), z.positive());

export function readEnv<S extends z.ZodMiniObject>(schema: S, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`Invalid environment: ${problems}`);
  }
  return parsed.data;
}

/** rediss:// turns TLS on (ElastiCache in transit encryption); the AUTH token travels in the URL. */
export const redisEnv = z.object({
  REDIS_URL: z.url({ protocol: /^rediss?$/ }),
  /** ElastiCache cluster mode: the client follows the cluster's slots (every script's keys share one). */
  REDIS_CLUSTER: z._default(flag, false),
});

export const databaseEnv = z.object({
  DATABASE_URL: z.url({ protocol: /^mysql$/ }),
  DATABASE_POOL_SIZE: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(200)), 10),
  /** On for RDS Proxy, which requires TLS; off for the twin's MariaDB on loopback. */
  DATABASE_TLS: z._default(flag, false),
});

/** AWS_ENDPOINT_URL is set only in the local twin; on AWS the SDK finds the regional endpoint itself. */
export const awsEnv = z.object({
  AWS_REGION: z._default(z.string().check(z.minLength(1)), 'us-east-1'),
  AWS_ENDPOINT_URL: z.optional(z.url()),
});

export const orderQueueEnv = z.object({ ORDER_QUEUE_URL: z.url() });

export const sessionEnv = z.object({
  SESSION_IDLE_SECONDS: z._default(seconds, 30 * 60),
  SESSION_ABSOLUTE_SECONDS: z._default(seconds, 12 * 60 * 60),
  /** Off only in the twin, which serves plain HTTP on loopback. */
  COOKIE_SECURE: z._default(flag, true),
});

/** Readers' addresses are <token>@INBOUND_DOMAIN; the domain SES receives mail for. */
export const inboundDomainEnv = z.object({
  INBOUND_DOMAIN: z.string().check(
    z.toLowerCase(),
    z.regex(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, 'a domain name such as inbound.example.com'),
  ),
});

/** Where SES's S3 action stores each raw message: <RAW_MAIL_PREFIX><SES messageId> in RAW_MAIL_BUCKET. */
export const rawMailEnv = z.object({
  RAW_MAIL_BUCKET: z.string().check(z.regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'an S3 bucket name')),
  RAW_MAIL_PREFIX: z._default(z.string().check(z.regex(/^[A-Za-z0-9!_.*'()/-]{0,100}$/, 'an S3 key prefix')), 'inbound/'),
});

/** What the mail function reads: the domain it takes mail for and where SES stores it. */
export const receiveMailEnv = z.extend(inboundDomainEnv, {
  ...rawMailEnv.shape,
  /** Parser threads per instance: 1 on Lambda (one event at a time); more in the twin, which stands for many instances. */
  MAIL_PARSER_THREADS: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(16)), 1),
});
