import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { APIGatewayProxyEventV2, ScheduledEvent, SQSEvent } from 'aws-lambda';
import { buckets, envNeedsOf, functions, inboundMail, type FunctionSpec, type QueueName } from '../../functions/table';
import { environmentFor, type Deployment } from '../../shared/platform/config';
import { migrate } from '../../shared/platform/db/migrate';
import { createSignedRequester, serviceLocation } from '../../shared/platform/clients/aws-http';
import { buildFunctionBundle } from '../bundling';
import { runnerFor, type FunctionRunner, type FunctionRuntime } from './runners';
import { TWIN_LOAD_TEST_SOURCES } from './load-test-sources';
import { ensureTwinCertificates, type TwinCertificates } from './tls';
import { capped } from './concurrency';
import { eachLine, EmfCollector, onStdoutLine } from './emf';
import { listenGateway } from './gateway';
import { compileRoutes, type HttpRoute } from './http-routes';
import { LocalLambda, type Handler } from './lambda';
import { startPoller, type Poller } from './poller';
import { provision, type ProvisionedQueue } from './provision';
import { demoAccounts, seed } from './seed';
import { functionArnOf, passingVerdicts, type Verdicts } from './ses-event';
import { SES_MAX_MESSAGE_BYTES, startSmtpListener, type MailRoute } from './smtp';
import { readyLine, spawnService, supervise } from './processes';
import { startRedisCluster } from './redis-cluster';
import { startDatabase, startEmulator, startRedis, type Service } from './services';

export interface TwinOptions {
  port: number;
  stateDir: string;
  database: string;
  /**
   * Where queue consumers (the pollers and the functions they invoke) run: in a process of their
   * own by default, as on AWS where the event source mapping and the consumer are not the API's
   * instances; in this process for tests; or not at all.
   */
  consumers?: 'process' | 'in-process' | 'off';
  /**
   * Functions served beside the table's, by whoever starts the twin (the benches' baselines): not
   * the table's, so never deployed, and always run from their sources in this process.
   */
  extraFunctions?: ExtraFunction[];
  /**
   * Redis keeps its data across restarts (append-only file) unless this is false. Benchmarks turn
   * it off: an AOF rewrite forking mid-run halves throughput on two cores, and ElastiCache's own
   * durability is replication, not a file on the primary's path.
   */
  durableRedis?: boolean;
  /** Redis as a cluster of three masters (ElastiCache cluster mode), the functions run with REDIS_CLUSTER=true. */
  redisCluster?: boolean;
  /** The SMTP listener's port; 0 picks a free one. */
  smtpPort?: number;
  /** The receipt verdicts the twin's SES stand-in reports; all PASS by default. */
  verdicts?: Verdicts;
  /**
   * Serve the functions as the bundles `cdk deploy` uploads, each in worker threads with exactly
   * its row's environment; migrations then run as the deploy trigger runs them, through the bundle.
   */
  bundles?: boolean;
  /** With bundles: Lambda's instance model, one event at a time per instance, at most this many instances per function. */
  lambdaInstances?: number;
  /**
   * Data stores as AWS runs them: TLS only, with a certificate of the twin's own CA, Redis AUTH and
   * a MariaDB user for the functions, whose passwords they look up in Secrets Manager (the
   * emulator's stand-in). The process must trust the CA through NODE_EXTRA_CA_CERTS, as main.ts sees to.
   */
  awsStores?: boolean;
  /**
   * Where the functions send to SQS, when not to the emulator itself: a fault proxy in front of it
   * (load/chaos). The pollers always read from the emulator, as an event source mapping does not
   * share the functions' path to the queue.
   */
  functionsSqsEndpoint?: string;
  /** Fault switch, off by default: the event source mapping hands every batch to its function twice, shuffled (see PollerOptions.deliverTwice). */
  deliverTwice?: boolean;
  /**
   * Put before the names of the twin's queues: twins that share one emulator (the tests', through
   * AWS_ENDPOINT_URL) would otherwise share their queues, and one's consumers take another's messages.
   */
  queuePrefix?: string;
  /** Called once the gateway listens, before anything else starts; it answers 503 until the twin is ready. */
  onListening?(url: string): void;
  /** Called when a process the twin supervises (the consumers', MariaDB) died and has been started again, with a new pid. */
  onRestart?(service: 'consumers' | 'database'): void;
}

/** A function the twin serves beside the table's: an HTTP route, or mail for a domain of its own. */
export interface ExtraFunction extends FunctionSpec {
  load(): Promise<Handler>;
  /** For an SES trigger: the domain its mail goes to, given the twin's inbound domain. */
  mailDomain?(inboundDomain: string): string;
}

/**
 * Names the module the twin's process imports its extra functions from (its export
 * `extraFunctions`); set by whoever starts `npm start`'s entry, e.g. the benches.
 */
export const EXTRA_FUNCTIONS_ENV = 'SURGE_EXTRA_FUNCTIONS';

export interface Twin {
  url: string;
  redisUrl: string;
  databaseUrl: string;
  emulatorUrl: string;
  smtpUrl: string;
  inboundDomain: string;
  queues: Record<QueueName, ProvisionedQueue>;
  /** Processes the twin started, by service, for CPU accounting in benchmarks; current after a restart. */
  pids: Record<string, number | undefined>;
  /** How the functions run, for the consumers' process and for benchmarks. */
  runtime: FunctionRuntime;
  /** The twin's own view of the stores, with their credentials, when they are AWS-like. */
  admin: { redisUrl: string; databaseUrl: string; ca?: string };
  stop(): Promise<void>;
}

/**
 * Where the functions find their stores' credentials in Secrets Manager when the stores are
 * AWS-like, and the deploy trigger the first admin's in bundle mode.
 */
export const TWIN_SECRETS = { database: 'surge/database', redisAuth: 'surge/redis-auth', firstAdmin: 'surge/first-admin' } as const;

const REGION = 'us-east-1';
/** Readers' addresses in the twin are <token>@inbound.surge.test (.test never resolves anywhere). */
export const TWIN_INBOUND_DOMAIN = 'inbound.surge.test';
const RAW_MAIL_BUCKET = buckets[inboundMail.bucket].name;

/**
 * A trivial function served through the same gateway and invoked the same way as the table's:
 * the ceiling benchmarks compare against. It is the twin's own, not a Lambda, so not in the table.
 */
export const CEILING_PATH = '/__twin/ceiling';
const ceilingSpec: FunctionSpec = {
  id: 'twin-ceiling',
  description: 'Answers 200 with a constant body',
  trigger: { kind: 'http', method: 'GET', path: CEILING_PATH },
  memoryMb: 128,
  timeoutSeconds: 3,
  env: [],
};

function logFunctionError(functionId: string, error: Error): void {
  process.stderr.write(`${JSON.stringify({ level: 'ERROR', source: 'twin', function: functionId, message: error.message })}\n`);
}

export interface TwinStores {
  redis: Pick<Service, 'url' | 'adminUrl' | 'cluster'>;
  database: Pick<Service, 'url' | 'adminUrl' | 'adminTls'>;
  emulator: Pick<Service, 'url'>;
}

/**
 * Where the twin's services are, as the needs of functions/table.ts see them (shared/platform/config.ts maps
 * each to its variables): for the functions, credentials come from secrets when the stores are
 * AWS-like; for the twin's own code (`admin`), they travel in the URLs.
 */
export function twinDeployment(stores: TwinStores, provisioned: Record<QueueName, ProvisionedQueue>, view: 'functions' | 'admin', lambdaInstances?: number): Deployment {
  const secure = stores.database.adminTls !== undefined;
  const functions = view === 'functions' && secure;
  return {
    redis: {
      ...(functions ? { url: stores.redis.url, authSecretId: TWIN_SECRETS.redisAuth } : { url: stores.redis.adminUrl }),
      ...(stores.redis.cluster ? { cluster: true } : {}),
    },
    database: {
      ...(functions ? { url: stores.database.url, secretId: TWIN_SECRETS.database } : { url: stores.database.adminUrl }),
      tls: secure,
      // Lambda's instance model: one event at a time needs one connection.
      ...(lambdaInstances ? { poolSize: 1 } : {}),
    },
    reservationQueueUrl: provisioned.reservations.url,
    cookieSecure: false,
    inboundDomain: TWIN_INBOUND_DOMAIN,
    // One instance of the twin's source mode stands for many mail-function instances, each of which would parse on its own.
    rawMail: { bucket: RAW_MAIL_BUCKET, prefix: inboundMail.prefix, parserThreads: lambdaInstances ? 1 : 4 },
    // The functions' view is bundle mode's, the one mode whose deploy trigger runs as a function:
    // only there does the twin provision the first admin's secret.
    ...(view === 'functions' ? { firstAdminSecretId: TWIN_SECRETS.firstAdmin } : {}),
    // The twin serves loopback only, where benches and Artillery send everything from 127.0.0.1:
    // the documented load-test allowance, unless SURGE_LOAD_TEST_SOURCES says otherwise ('' for none).
    ...(loadTestSources() ? { loadTestSources: loadTestSources() } : {}),
  };
}

const loadTestSources = () => process.env.SURGE_LOAD_TEST_SOURCES ?? TWIN_LOAD_TEST_SOURCES;

/** What Lambda's runtime puts in every function's environment, as the twin provides it. */
export function runtimeEnvironment(emulatorUrl: string, functionsSqsEndpoint?: string): Record<string, string> {
  return {
    AWS_REGION: REGION,
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
export function functionEnvironment(stores: TwinStores, provisioned: Record<QueueName, ProvisionedQueue>, functionsSqsEndpoint?: string) {
  const allNeeds = [...new Set(functions.flatMap(envNeedsOf))];
  return { ...runtimeEnvironment(stores.emulator.url, functionsSqsEndpoint), ...environmentFor(allNeeds, twinDeployment(stores, provisioned, 'admin')) };
}

/** Carries the provisioned queues, the functions' runtime and the delivery fault switch to the consumers' process. */
export const QUEUES_ENV = 'SURGE_QUEUES';
export const RUNTIME_ENV = 'SURGE_FUNCTION_RUNTIME';
export const DELIVER_TWICE_ENV = 'SURGE_DELIVER_TWICE';

/** The twin's event source mappings: a poller per queue trigger in the table, invoking its function. */
export function startConsumers(provisioned: Record<QueueName, ProvisionedQueue>, sqs: SQSClient, runtime: FunctionRuntime, deliverTwice = false): { stop(): Promise<void> } {
  const runners: FunctionRunner[] = [];
  const pollers: Poller[] = functions.flatMap((spec) => {
    if (spec.trigger.kind !== 'queue') return [];
    const queue = provisioned[spec.trigger.queue];
    const lambda = runnerFor(spec, runtime);
    runners.push(lambda);
    return [
      startPoller({
        sqs,
        queueUrl: queue.url,
        queueArn: queue.arn,
        region: REGION,
        batchSize: spec.trigger.batchSize,
        maxBatchingWindowSeconds: spec.trigger.maxBatchingWindowSeconds,
        // Lambda's event source mapping scales down to a capped function's concurrency: the rest wait in the queue.
        maxConcurrency: Math.min(spec.trigger.maxConcurrency, spec.concurrencyCap ?? Infinity),
        invoke: (event: SQSEvent) => lambda.invoke(event),
        onError: (error) => logFunctionError(spec.id, error),
        deliverTwice,
      }),
    ];
  });
  return {
    stop: async () => {
      await Promise.all(pollers.map((p) => p.stop()));
      await Promise.all(runners.map((r) => r.stop()));
    },
  };
}

/** The EventBridge event a schedule rule sends. */
function scheduledEvent(functionId: string): ScheduledEvent {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: '000000000000',
    time: new Date().toISOString(),
    region: REGION,
    resources: [`arn:aws:events:${REGION}:000000000000:rule/surge-${functionId}`],
    detail: {},
  };
}

/** The event a trigger that is not HTTP, a queue or SES sends: a schedule rule's, or the deploy trigger's (which carries nothing the function reads). */
function triggerEvent(spec: FunctionSpec): unknown {
  return spec.trigger.kind === 'schedule' ? scheduledEvent(spec.id) : {};
}

/**
 * GET /__twin/metrics: the EMF metrics the functions printed since the twin started, summed per
 * metric and dimension values as CloudWatch would (see EmfCollector), with the latest lines.
 */
export const METRICS_PATH = '/__twin/metrics';

/** POST /__twin/functions/{functionId}/invoke fires a schedule or the deploy trigger on demand, as EventBridge or CloudFormation would. */
export const FIRE_PATH = '/__twin/functions/{functionId}/invoke';

/** Certificates for AWS-like stores, once the process trusts their CA as the functions' runtime must. */
async function trustedCertificates(stateDir: string): Promise<TwinCertificates> {
  const certificates = await ensureTwinCertificates(join(stateDir, 'tls'));
  if (process.env.NODE_EXTRA_CA_CERTS !== certificates.caFile) {
    throw new Error(`AWS-like stores need this process started with NODE_EXTRA_CA_CERTS=${certificates.caFile} (npm start does that)`);
  }
  return certificates;
}

/** Stores the twin's secrets in the emulator's Secrets Manager, as the stack's generated secrets are on AWS. */
export async function putSecrets(emulatorUrl: string, values: Record<string, string>): Promise<void> {
  const send = createSignedRequester({ service: 'secretsmanager', region: REGION, credentials: async () => ({ accessKeyId: 'local', secretAccessKey: 'local' }), uriEscapePath: true });
  for (const [name, value] of Object.entries(values)) {
    for (const action of ['CreateSecret', 'PutSecretValue']) {
      const response = await send(serviceLocation('secretsmanager', REGION, emulatorUrl), {
        method: 'POST',
        headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': `secretsmanager.${action}` },
        body: JSON.stringify({ Name: name, SecretId: name, SecretString: value }),
      });
      response.resume();
      if (response.statusCode === 200) break;
      if (action === 'PutSecretValue') throw new Error(`The twin could not store the secret ${name}: Secrets Manager's stand-in answered ${response.statusCode}`);
    }
  }
}

export async function startTwin(options: TwinOptions): Promise<Twin> {
  // The SDK versions pinned here support Node 20; its notice about future versions is noise in the twin.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  if (options.redisCluster && options.awsStores) throw new Error('--redis-cluster runs a plaintext cluster: it does not combine with --aws-stores yet');
  const certificates = options.awsStores ? await trustedCertificates(options.stateDir) : undefined;
  const secure = certificates && {
    certificates,
    redisPassword: randomBytes(24).toString('hex'),
    database: { user: 'surge', password: randomBytes(24).toString('hex') },
  };
  const gateway = await listenGateway(options.port, logFunctionError);
  options.onListening?.(gateway.url);
  const [redis, database, emulator] = await Promise.all([
    options.redisCluster ? startRedisCluster(options.stateDir, options.durableRedis ?? true) : startRedis(options.stateDir, options.durableRedis ?? true, secure),
    startDatabase(options.stateDir, options.database, secure, () => options.onRestart?.('database')),
    startEmulator(options.stateDir),
  ]).catch(async (error: Error) => {
    await gateway.close();
    throw error;
  });
  const stores = { redis, database, emulator };
  const stopServices = () => Promise.all([redis.stop(), database.stop(), emulator.stop()]);
  const runners: FunctionRunner[] = [];
  // What the functions print: in this process (source mode, bundle mode's workers) and the consumers'.
  const emf = new EmfCollector();
  const stopTap = onStdoutLine((line) => emf.take(line));
  try {
    const clientOptions = { region: REGION, endpoint: emulator.url, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };
    const sqs = new SQSClient(clientOptions);
    const s3 = new S3Client({ ...clientOptions, forcePathStyle: true });
    const provisioned = await provision(sqs, s3, options.queuePrefix);
    const demoAdmin = demoAccounts.find((account) => account.role === 'admin')!;
    await putSecrets(emulator.url, {
      ...(secure
        ? {
            [TWIN_SECRETS.database]: JSON.stringify({ username: secure.database.user, password: secure.database.password }),
            [TWIN_SECRETS.redisAuth]: secure.redisPassword,
          }
        : {}),
      // The demo admin, whom the seed also keeps, so on a fresh database the deploy trigger creates it as on AWS.
      ...(options.bundles ? { [TWIN_SECRETS.firstAdmin]: JSON.stringify({ email: demoAdmin.email, password: demoAdmin.password }) } : {}),
    });
    const runtime: FunctionRuntime = options.bundles
      ? {
          kind: 'bundles',
          dir: await buildBundles(join(options.stateDir, 'bundles')),
          deployment: twinDeployment(stores, provisioned, 'functions', options.lambdaInstances),
          runtimeEnv: runtimeEnvironment(emulator.url, options.functionsSqsEndpoint),
          ...(options.lambdaInstances ? { instances: options.lambdaInstances } : {}),
        }
      : { kind: 'source' };

    // The twin's own code (and every function, in source mode) reads this process's environment.
    Object.assign(process.env, functionEnvironment(stores, provisioned, options.functionsSqsEndpoint));
    const lambdas = new Map<string, FunctionRunner>(
      functions.filter((spec) => spec.trigger.kind !== 'queue').map((spec) => [spec.id, runnerFor(spec, runtime)]),
    );
    runners.push(...lambdas.values());
    const deploy = functions.filter((spec) => spec.trigger.kind === 'deploy');
    if (runtime.kind === 'bundles') {
      // As `cdk deploy` does: the migration trigger runs before anything takes traffic.
      for (const spec of deploy) await lambdas.get(spec.id)!.invoke(triggerEvent(spec));
    } else {
      await migrate({ url: database.adminUrl, ...(database.adminTls ? { tls: database.adminTls } : {}) });
    }
    await seed();

    const httpRoutes: HttpRoute[] = functions.flatMap((spec: FunctionSpec) => {
      if (spec.trigger.kind !== 'http') return [];
      const lambda = lambdas.get(spec.id)!;
      return [{ method: spec.trigger.method, path: spec.trigger.path, invoke: capped(spec, (event: APIGatewayProxyEventV2) => lambda.invoke(event), 'refuse') }];
    });
    const mailRoutes: MailRoute[] = functions.flatMap((spec) => {
      if (spec.trigger.kind !== 'ses') return [];
      const lambda = lambdas.get(spec.id)!;
      return [{ domain: TWIN_INBOUND_DOMAIN, functionArn: functionArnOf(`surge-${spec.id}`), invoke: capped(spec, (event) => lambda.invoke(event), 'wait') }];
    });
    const ceiling = new LocalLambda(ceilingSpec, async () => async () => ({ statusCode: 200, body: '{"ok":true}' }));
    httpRoutes.push({ method: 'GET', path: CEILING_PATH, invoke: (event) => ceiling.invoke(event) });
    httpRoutes.push({
      method: 'GET',
      path: METRICS_PATH,
      invoke: async () => ({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(emf.snapshot()) }),
    });
    httpRoutes.push({
      method: 'POST',
      path: FIRE_PATH,
      invoke: async (event) => {
        const spec = functions.find((f) => f.id === event.pathParameters?.functionId && (f.trigger.kind === 'schedule' || f.trigger.kind === 'deploy'));
        if (!spec) return { statusCode: 404, body: JSON.stringify({ error: { code: 'NOT_FOUND', message: 'No schedule or deploy trigger of that function' } }) };
        const result = await lambdas.get(spec.id)!.invoke(triggerEvent(spec));
        return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ result }) };
      },
    });
    for (const spec of options.extraFunctions ?? []) {
      const lambda = new LocalLambda(spec, () => spec.load());
      if (spec.trigger.kind === 'http') {
        httpRoutes.push({ method: spec.trigger.method, path: spec.trigger.path, invoke: (event) => lambda.invoke(event) });
      } else if (spec.trigger.kind === 'ses') {
        if (!spec.mailDomain) throw new Error(`extra function ${spec.id}: an SES trigger needs a mailDomain`);
        mailRoutes.push({ domain: spec.mailDomain(TWIN_INBOUND_DOMAIN), functionArn: functionArnOf(spec.id), invoke: (event) => lambda.invoke(event) });
      } else {
        throw new Error(`extra function ${spec.id}: only HTTP and SES triggers are served`);
      }
    }
    // Every function warm before traffic; in bundle mode their inits take turns for this machine's
    // cores (see InitSlots), each held to Lambda's init limit from when its own begins.
    await Promise.all([...lambdas.values()].map((lambda) => lambda.warm()));

    const routes = compileRoutes(httpRoutes);
    const smtp = await startSmtpListener({
      port: options.smtpPort ?? inboundMail.smtpPort,
      routes: mailRoutes,
      maxMessageBytes: SES_MAX_MESSAGE_BYTES,
      verdicts: options.verdicts ?? passingVerdicts(),
      store: async (messageId, raw) => {
        await s3.send(new PutObjectCommand({ Bucket: RAW_MAIL_BUCKET, Key: `${inboundMail.prefix}${messageId}`, Body: raw, ContentType: 'message/rfc822' }));
      },
      onError: (error) => logFunctionError('smtp', error),
    });

    const consumers = await (async (): Promise<{ readonly pid?: number; stop(): Promise<void> } | undefined> => {
      switch (options.consumers ?? 'process') {
        case 'off':
          return undefined;
        case 'in-process':
          return startConsumers(provisioned, sqs, runtime, options.deliverTwice);
        case 'process': {
          const entry = new URL('./consumers.ts', import.meta.url).pathname;
          const logFile = join(options.stateDir, 'consumers.log');
          const env = { ...process.env, [QUEUES_ENV]: JSON.stringify(provisioned), [RUNTIME_ENV]: JSON.stringify(runtime), [DELIVER_TWICE_ENV]: String(Boolean(options.deliverTwice)) };
          const start = async () => {
            const proc = spawnService(process.execPath, ['--import', 'tsx', entry], logFile, env);
            eachLine(proc.child.stdout!, (line) => emf.take(line));
            await readyLine(proc, /^ready/m, logFile);
            return proc;
          };
          // One that dies mid-batch is replaced, as Lambda replaces an instance; its batch comes back after the visibility timeout.
          return supervise('consumers', start, () => options.onRestart?.('consumers')).catch(async (error: Error) => {
            await smtp.close();
            throw error;
          });
        }
      }
    })();

    const schedules = functions.flatMap((spec) => {
      if (spec.trigger.kind !== 'schedule') return [];
      const lambda = lambdas.get(spec.id)!;
      const timer = setInterval(() => {
        lambda.invoke(triggerEvent(spec)).catch((error: Error) => logFunctionError(spec.id, error));
      }, spec.trigger.rateMinutes * 60_000);
      timer.unref();
      return [timer];
    });

    // Ready: the stores are seeded, and the SMTP listener and the consumers are up.
    gateway.serve(routes);
    return {
      url: gateway.url,
      redisUrl: redis.adminUrl,
      databaseUrl: database.adminUrl,
      emulatorUrl: emulator.url,
      smtpUrl: smtp.url,
      inboundDomain: TWIN_INBOUND_DOMAIN,
      queues: provisioned,
      // Read when asked: a supervised process has a new pid after each restart.
      pids: {
        gateway: process.pid,
        get consumers() {
          return consumers?.pid ?? (consumers ? process.pid : undefined);
        },
        redis: redis.pid,
        get database() {
          return database.pid;
        },
        emulator: emulator.pid,
      },
      runtime,
      admin: { redisUrl: redis.adminUrl, databaseUrl: database.adminUrl, ...(database.adminTls ? { ca: database.adminTls.ca } : {}) },
      async stop() {
        for (const timer of schedules) clearInterval(timer);
        await Promise.all([gateway.close(), smtp.close()]);
        await consumers?.stop();
        await Promise.all(runners.map((r) => r.stop()));
        await stopServices();
        stopTap();
      },
    };
  } catch (error) {
    await Promise.all([gateway.close(), ...runners.map((r) => r.stop())]);
    await stopServices();
    stopTap();
    throw error;
  }
}

/** Every function's bundle, built as `cdk deploy` builds it, side by side under dir. */
async function buildBundles(dir: string): Promise<string> {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  await Promise.all(functions.map((spec) => buildFunctionBundle(root, spec, join(dir, spec.id))));
  return dir;
}
