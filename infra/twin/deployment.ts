import { availableParallelism } from 'node:os';
/**
 * Where the twin's services are, in the terms the functions read them: the Deployment that
 * shared/platform/config.ts maps to each function's variables, and what Lambda's runtime adds.
 */
import { buckets, envNeedsOf, functions, inboundMail, orderRouteRateLimit, type QueueName } from '../../functions/table';
import { environmentFor, type Deployment } from '../../shared/platform/config';
import { TWIN_LOAD_TEST_SOURCES } from './load-test-sources';
import type { ProvisionedQueue } from './provision';
import type { Service } from './services/services';

export const TWIN_REGION = 'us-east-1';
/** Readers' addresses in the twin are <token>@inbound.surge.test (.test never resolves anywhere). */
export const TWIN_INBOUND_DOMAIN = 'inbound.surge.test';
export const TWIN_RAW_MAIL_BUCKET = buckets[inboundMail.bucket].name;

/**
 * Where the functions find their stores' credentials in Secrets Manager when the stores are
 * AWS-like, and the deploy trigger the first admin's in bundle mode.
 */
export const TWIN_SECRETS = { database: 'surge/database', redisAuth: 'surge/redis-auth', firstAdmin: 'surge/first-admin' } as const;

export interface TwinStores {
  redis: Pick<Service, 'url' | 'adminUrl' | 'cluster' | 'replicaAcks'>;
  database: Pick<Service, 'url' | 'adminUrl' | 'adminTls'>;
  emulator: Pick<Service, 'url'>;
}

/**
 * Where the twin's services are, as the needs of functions/table.ts see them (shared/platform/config.ts maps
 * each to its variables): for the functions, credentials come from secrets when the stores are
 * AWS-like; for the twin's own code (`admin`), they travel in the URLs.
 */
/** What a twin adds to its stores' places: Lambda's instance model, and the origin secret of the edge in front. */
export interface TwinShape {
  lambdaInstances?: number;
  /** With --edge: the secret the routes' functions check the edge's origin header against. */
  originSecretId?: string;
}

export function twinDeployment(
  stores: TwinStores,
  provisioned: Record<QueueName, ProvisionedQueue>,
  view: 'functions' | 'admin',
  { lambdaInstances, originSecretId }: TwinShape = {},
): Deployment {
  const secure = stores.database.adminTls !== undefined;
  const functions = view === 'functions' && secure;
  return {
    redis: {
      ...(functions ? { url: stores.redis.url, authSecretId: TWIN_SECRETS.redisAuth } : { url: stores.redis.adminUrl }),
      ...(stores.redis.cluster ? { cluster: true } : {}),
      ...(stores.redis.replicaAcks ? { replicaAcks: stores.redis.replicaAcks } : {}),
    },
    database: {
      ...(functions ? { url: stores.database.url, secretId: TWIN_SECRETS.database } : { url: stores.database.adminUrl }),
      tls: secure,
      // Lambda's instance model: one event at a time needs one connection.
      ...(lambdaInstances ? { poolSize: 1 } : {}),
    },
    reservationQueueUrl: provisioned.reservations.url,
    // A twin measuring Lambda's default compute: each reservation sent alone, as its instances send it.
    ...(process.env.SURGE_HAND_OFF_ALONE === 'true' ? { handOffAlone: true } : {}),
    reservationDlqUrl: provisioned.reservations.deadLetterUrl,
    cookieSecure: false,
    inboundDomain: TWIN_INBOUND_DOMAIN,
    orderRouteRateLimit: orderRouteRateLimit(),
    // One instance of the twin's source mode stands for many mail-function instances, each of which
    // would parse on its own: a parser thread per core, no more — on two cores, four threads each
    // compiled the parser for themselves and waited for a core (8.2 ms of CPU per mail against 5.1).
    rawMail: {
      bucket: TWIN_RAW_MAIL_BUCKET,
      prefix: inboundMail.prefix,
      retentionDays: inboundMail.retentionDays,
      parserThreads: lambdaInstances ? 1 : Math.min(4, availableParallelism()),
    },
    // The functions' view is bundle mode's, the one mode whose deploy trigger runs as a function:
    // only there does the twin provision the first admin's secret.
    ...(view === 'functions' ? { firstAdminSecretId: TWIN_SECRETS.firstAdmin } : {}),
    // The twin serves loopback only, where benches and Artillery send everything from 127.0.0.1:
    // the documented load-test allowance, unless SURGE_LOAD_TEST_SOURCES says otherwise ('' for none).
    ...(loadTestSources() ? { loadTestSources: loadTestSources() } : {}),
    ...(originSecretId ? { originSecretId } : {}),
  };
}

const loadTestSources = () => process.env.SURGE_LOAD_TEST_SOURCES ?? TWIN_LOAD_TEST_SOURCES;

/** What Lambda's runtime puts in every function's environment, as the twin provides it. */
export function runtimeEnvironment(emulatorUrl: string, functionsSqsEndpoint?: string): Record<string, string> {
  return {
    AWS_REGION: TWIN_REGION,
    AWS_ENDPOINT_URL: emulatorUrl,
    ...(functionsSqsEndpoint ? { AWS_ENDPOINT_URL_SQS: functionsSqsEndpoint } : {}),
    // The emulator accepts any credentials; the SDK only needs some to sign with.
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    ...(process.env.POWERTOOLS_LOG_LEVEL ? { POWERTOOLS_LOG_LEVEL: process.env.POWERTOOLS_LOG_LEVEL } : {}),
    ...(process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ? { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' } : {}),
  };
}

/** The environment of the twin's own process, which runs every function in source mode: the union of every function's needs. */
export function functionEnvironment(
  stores: TwinStores,
  provisioned: Record<QueueName, ProvisionedQueue>,
  functionsSqsEndpoint?: string,
  originSecretId?: string,
) {
  const allNeeds = [...new Set(functions.flatMap(envNeedsOf))];
  return {
    ...runtimeEnvironment(stores.emulator.url, functionsSqsEndpoint),
    ...environmentFor(allNeeds, twinDeployment(stores, provisioned, 'admin', originSecretId ? { originSecretId } : {})),
  };
}
