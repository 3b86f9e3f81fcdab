import * as z from './zod';

/**
 * Thrown where a setting is first read, on first use and never at import (a build step imports every
 * entry file without an environment): a misconfigured function fails its invocation rather than run on a wrong value.
 */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * A need's schema, built at its first read rather than at import. A bundle carries the whole of this
 * file, and a zod schema's construction is a call esbuild cannot drop, so every schema here was
 * built at every cold start, whatever the function read: 7 % of GET /me's import in instructions
 * (callgrind). A need no function's code reads is dropped from its bundle whole.
 */
export interface EnvSchema<S extends z.ZodMiniObject = z.ZodMiniObject> {
  readonly schema: S;
}

// @__NO_SIDE_EFFECTS__
function envSchema<S extends z.ZodMiniObject>(build: () => S): EnvSchema<S> {
  let schema: S | undefined;
  return {
    get schema() {
      schema ??= build();
      return schema;
    },
  };
}

const flag = () =>
  z.pipe(
    z.enum(['true', 'false']),
    z.transform((v) => v === 'true'),
  );
const seconds = () => z.coerce.number().check(z.int(), z.positive());

export function readEnv<S extends z.ZodMiniObject>({ schema }: EnvSchema<S>, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`Invalid environment: ${problems}`);
  }
  return parsed.data;
}

/** A Secrets Manager secret's ARN or name, read at cold start (see clients/secrets.ts). */
const secretId = () => z.optional(z.string().check(z.minLength(1), z.maxLength(2048)));

/**
 * rediss:// turns TLS on (ElastiCache in transit encryption). The AUTH token is the secret
 * REDIS_AUTH_SECRET_ID names; a URL may carry one instead only where there is no secret (the twin).
 */
export const redisEnv = envSchema(() =>
  z.object({
    REDIS_URL: z.url({ protocol: /^rediss?$/ }),
    REDIS_AUTH_SECRET_ID: secretId(),
    /** ElastiCache cluster mode: the client follows the cluster's slots (every script's keys share one). */
    REDIS_CLUSTER: z._default(flag(), false),
    /**
     * How many replicas must hold a reservation's writes before its buyer is told it stands (WAIT;
     * shared/platform/clients/replicas.ts): 1 on a shape with replicas that WAIT serves, 0 (off) where
     * there is none or the store itself waits (the durable shape).
     */
    REDIS_REPLICA_ACKS: z._default(z.coerce.number().check(z.int(), z.minimum(0), z.maximum(5)), 0),
  }),
);

/**
 * The user and password come from the secret DATABASE_SECRET_ID names (RDS's JSON secret:
 * username, password), looked up at cold start; a URL may carry them only where there is no secret.
 */
export const databaseEnv = envSchema(() =>
  z.object({
    DATABASE_URL: z.url({ protocol: /^mysql$/ }),
    DATABASE_SECRET_ID: secretId(),
    DATABASE_POOL_SIZE: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(200)), 10),
    /** On for RDS Proxy, which requires TLS; off for the twin's MariaDB on loopback. */
    DATABASE_TLS: z._default(flag(), false),
  }),
);

/**
 * AWS_ENDPOINT_URL is set only in the local twin; on AWS the SDK finds the regional endpoint itself.
 * AWS_ENDPOINT_URL_SQS (the SDK's own name for a per-service endpoint) only in a twin whose
 * functions send through a fault proxy (load/chaos).
 */
export const awsEnv = envSchema(() =>
  z.object({
    AWS_REGION: z._default(z.string().check(z.minLength(1)), 'us-east-1'),
    AWS_ENDPOINT_URL: z.optional(z.url()),
    AWS_ENDPOINT_URL_SQS: z.optional(z.url()),
  }),
);

export const reservationQueueEnv = envSchema(() =>
  z.object({
    RESERVATION_QUEUE_URL: z.url(),
    /**
     * Each reservation handed off in a SendMessageBatch of its own, as an instance of Lambda's
     * default compute sends (one invocation at a time): set only by a twin measuring that shape
     * (SURGE_HAND_OFF_ALONE), whose one instance of a function would otherwise coalesce the
     * sends of its concurrent invocations, as an environment of the stack's Managed Instances
     * does with those it runs at once.
     */
    HAND_OFF_ALONE: z._default(flag(), false),
  }),
);
/** The reservation queue's dead-letter queue, where the writer parks a message it cannot read (a hand-off version it does not know). */
export const reservationFailuresEnv = envSchema(() => z.object({ RESERVATION_DLQ_URL: z.url() }));

export const sessionEnv = envSchema(() =>
  z.object({
    SESSION_IDLE_SECONDS: z._default(seconds(), 30 * 60),
    SESSION_ABSOLUTE_SECONDS: z._default(seconds(), 12 * 60 * 60),
    /** Off only in the twin, which serves plain HTTP on loopback. */
    COOKIE_SECURE: z._default(flag(), true),
  }),
);

/** Readers' addresses are <token>@INBOUND_DOMAIN; the domain SES receives mail for. */
export const inboundDomainEnv = envSchema(() =>
  z.object({
    INBOUND_DOMAIN: z
      .string()
      .check(z.toLowerCase(), z.regex(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, 'a domain name such as inbound.example.com')),
  }),
);

/** Where SES's S3 action stores each raw message: <RAW_MAIL_PREFIX><SES messageId> in RAW_MAIL_BUCKET. */
export const rawMailEnv = envSchema(() =>
  z.object({
    RAW_MAIL_BUCKET: z.string().check(z.regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'an S3 bucket name')),
    RAW_MAIL_PREFIX: z._default(z.string().check(z.regex(/^[A-Za-z0-9!_.*'()/-]{0,100}$/, 'an S3 key prefix')), 'inbound/'),
    /** Parser threads per instance: 1 on Lambda (one event at a time); more in the twin's shared instance, which stands for many. */
    MAIL_PARSER_THREADS: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(16)), 1),
  }),
);

/**
 * How long raw messages are kept, quarantined ones included: functions/table.ts's inboundMail,
 * which also sets the bucket's expiry, so mail offered for release still has its raw message.
 */
export const mailRetentionEnv = envSchema(() => z.object({ RAW_MAIL_RETENTION_DAYS: z.coerce.number().check(z.int(), z.positive()) }));

/**
 * The secret (JSON: email, password) of the admin the deploy trigger creates when its address is
 * not taken yet. Unset where nothing provisions one: then the trigger only migrates.
 */
export const firstAdminEnv = envSchema(() => z.object({ FIRST_ADMIN_SECRET_ID: secretId() }));

/**
 * Sources exempt from the per-source rate limits: a load test's generators (IPv4 CIDR blocks,
 * comma-separated, e.g. 127.0.0.0/8). Unset everywhere but a twin or dev stage under load tests;
 * the prod stage refuses it.
 */
export const limitsEnv = envSchema(() =>
  z.object({
    LOAD_TEST_SOURCES: z.optional(
      z.string().check(z.regex(/^(\d{1,3}(\.\d{1,3}){3}\/\d{1,2})(,\d{1,3}(\.\d{1,3}){3}\/\d{1,2})*$/, 'IPv4 CIDR blocks, comma-separated')),
    ),
  }),
);

/**
 * Behind CloudFront, the secret (a plain string) CloudFront sends to the API as this header on
 * every request; a request without it did not come through the distribution (and its WAF), and is
 * refused. Unset where nothing is in front (the twin, a dev stack without CloudFront).
 */
export const ORIGIN_VERIFY_HEADER = 'x-origin-verify';
export const cloudFrontEnv = envSchema(() => z.object({ ORIGIN_SECRET_ID: secretId() }));

/**
 * The rate at which the order route's throttle passes orders (functions/table.ts), all items
 * together: a waiting room that admits faster sends its pass holders into API Gateway's 429s.
 */
export const orderRouteEnv = envSchema(() => z.object({ ORDER_ROUTE_RATE_LIMIT: z.coerce.number().check(z.positive()) }));

/** What the mail function reads: the domain it takes mail for and where SES stores it. */
export const receiveMailEnv = envSchema(() => z.extend(inboundDomainEnv.schema, rawMailEnv.schema.shape));

/** Set in every function's environment, whatever its needs. */
export const serviceEnvironment = { POWERTOOLS_SERVICE_NAME: 'surge' } as const;

/** What a function reads from its environment, by need; functions/table.ts lists each function's. */
export const envNeeds = {
  redis: redisEnv,
  database: databaseEnv,
  reservationQueue: reservationQueueEnv,
  reservationFailures: reservationFailuresEnv,
  sessions: sessionEnv,
  inboundDomain: inboundDomainEnv,
  rawMail: rawMailEnv,
  mailRetention: mailRetentionEnv,
  firstAdmin: firstAdminEnv,
  limits: limitsEnv,
  cloudFront: cloudFrontEnv,
  orderRoute: orderRouteEnv,
} as const satisfies Record<string, EnvSchema>;

export type EnvNeed = keyof typeof envNeeds;

/** Where one deployment's needs point: the stack's resources on AWS, the twin's services locally. */
export interface Deployment {
  redis: { url: string; authSecretId?: string; cluster?: boolean; replicaAcks?: number };
  database: { url: string; secretId?: string; tls: boolean; poolSize?: number };
  reservationQueueUrl: string;
  /** Only a twin measuring the hand-off of Lambda's default compute sets it (reservationQueueEnv). */
  handOffAlone?: boolean;
  reservationDlqUrl: string;
  cookieSecure: boolean;
  inboundDomain: string;
  rawMail: { bucket: string; prefix: string; retentionDays: number; parserThreads?: number };
  firstAdminSecretId?: string;
  loadTestSources?: string;
  /** Set only where CloudFront fronts the API: the secret of its origin header. */
  originSecretId?: string;
  /** The order route's throttle, its rate a second (functions/table.ts). */
  orderRouteRateLimit: number;
}

const optional = (name: string, value: string | number | boolean | undefined): Record<string, string> => (value === undefined ? {} : { [name]: String(value) });

/** The variables each need sets in a deployment: the one place a need becomes environment. */
const variablesOf: Record<EnvNeed, (d: Deployment) => Record<string, string>> = {
  redis: (d) => ({
    REDIS_URL: d.redis.url,
    ...optional('REDIS_AUTH_SECRET_ID', d.redis.authSecretId),
    ...optional('REDIS_CLUSTER', d.redis.cluster),
    ...optional('REDIS_REPLICA_ACKS', d.redis.replicaAcks),
  }),
  database: (d) => ({
    DATABASE_URL: d.database.url,
    ...optional('DATABASE_SECRET_ID', d.database.secretId),
    ...optional('DATABASE_POOL_SIZE', d.database.poolSize),
    DATABASE_TLS: String(d.database.tls),
  }),
  reservationQueue: (d) => ({ RESERVATION_QUEUE_URL: d.reservationQueueUrl, ...optional('HAND_OFF_ALONE', d.handOffAlone) }),
  reservationFailures: (d) => ({ RESERVATION_DLQ_URL: d.reservationDlqUrl }),
  sessions: (d) => ({ COOKIE_SECURE: String(d.cookieSecure) }),
  inboundDomain: (d) => ({ INBOUND_DOMAIN: d.inboundDomain }),
  rawMail: (d) => ({
    RAW_MAIL_BUCKET: d.rawMail.bucket,
    RAW_MAIL_PREFIX: d.rawMail.prefix,
    ...optional('MAIL_PARSER_THREADS', d.rawMail.parserThreads),
  }),
  mailRetention: (d) => ({ RAW_MAIL_RETENTION_DAYS: String(d.rawMail.retentionDays) }),
  firstAdmin: (d) => optional('FIRST_ADMIN_SECRET_ID', d.firstAdminSecretId),
  limits: (d) => optional('LOAD_TEST_SOURCES', d.loadTestSources),
  cloudFront: (d) => optional('ORIGIN_SECRET_ID', d.originSecretId),
  orderRoute: (d) => ({ ORDER_ROUTE_RATE_LIMIT: String(d.orderRouteRateLimit) }),
};

/** A function's environment for its needs: every variable its needs' schemas read that the deployment sets, and no other. */
export function environmentFor(needs: readonly EnvNeed[], deployment: Deployment): Record<string, string> {
  return Object.assign({}, ...needs.map((need) => variablesOf[need](deployment)));
}
