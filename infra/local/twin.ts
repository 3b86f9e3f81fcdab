import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { APIGatewayProxyEventV2, ScheduledEvent, SQSEvent } from 'aws-lambda';
import { buckets, functions, inboundMail, type FunctionSpec, type QueueName } from '../../functions/table';
import { environmentFor, type Deployment } from '../../shared/config';
import { migrate } from '../../shared/db/migrate';
import { startGateway, type Gateway, type HttpRoute } from './gateway';
import { LocalLambda } from './lambda';
import { startPoller, type Poller } from './poller';
import { provision, type ProvisionedQueue } from './provision';
import { seed } from './seed';
import { functionArnOf, passingVerdicts, type Verdicts } from './ses-event';
import { SES_MAX_MESSAGE_BYTES, startSmtpListener, type MailRoute } from './smtp';
import { readyLine, spawnService } from './processes';
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
  /** Also serve load/baselines under /__baseline/… (and mail for baseline.<inbound domain>), for benchmarks. */
  baselines?: boolean;
  /**
   * Redis keeps its data across restarts (append-only file) unless this is false. Benchmarks turn
   * it off: an AOF rewrite forking mid-run halves throughput on two cores, and ElastiCache's own
   * durability is replication, not a file on the primary's path.
   */
  durableRedis?: boolean;
  /** The SMTP listener's port; 0 picks a free one. */
  smtpPort?: number;
  /** The receipt verdicts the twin's SES stand-in reports; all PASS by default. */
  verdicts?: Verdicts;
}

export interface Twin {
  url: string;
  redisUrl: string;
  databaseUrl: string;
  emulatorUrl: string;
  smtpUrl: string;
  inboundDomain: string;
  queues: Record<QueueName, ProvisionedQueue>;
  /** Processes the twin started, by service, for CPU accounting in benchmarks. */
  pids: Record<string, number | undefined>;
  stop(): Promise<void>;
}

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

/** Where the twin's services are, as the needs of functions/table.ts see them (shared/config.ts maps each to its variables). */
export function twinDeployment(services: Record<'redis' | 'database' | 'emulator', Pick<Service, 'url'>>, provisioned: Record<QueueName, ProvisionedQueue>): Deployment {
  return {
    redis: { url: services.redis.url },
    database: { url: services.database.url, tls: false },
    orderQueueUrl: provisioned.orders.url,
    cookieSecure: false,
    inboundDomain: TWIN_INBOUND_DOMAIN,
    // One process stands for many mail-function instances, each of which would parse on its own.
    rawMail: { bucket: RAW_MAIL_BUCKET, prefix: inboundMail.prefix, parserThreads: 4 },
  };
}

/** What Lambda's runtime puts in every function's environment, as the twin provides it. */
export function runtimeEnvironment(emulatorUrl: string): Record<string, string> {
  return {
    AWS_REGION: REGION,
    AWS_ENDPOINT_URL: emulatorUrl,
    // The emulator accepts any credentials; the SDK only needs some to sign with.
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
  };
}

/** The environment of the twin's shared instance, which runs every function: the union of every function's. */
export function functionEnvironment(services: Record<'redis' | 'database' | 'emulator', Pick<Service, 'url'>>, provisioned: Record<QueueName, ProvisionedQueue>) {
  const allNeeds = [...new Set(functions.flatMap((spec) => spec.env))];
  return { ...runtimeEnvironment(services.emulator.url), ...environmentFor(allNeeds, twinDeployment(services, provisioned)) };
}

/** Carries the provisioned queues to the consumers' process. */
export const QUEUES_ENV = 'SURGE_QUEUES';

/** The twin's event source mappings: a poller per queue trigger in the table, invoking its function. */
export function startConsumers(provisioned: Record<QueueName, ProvisionedQueue>, sqs: SQSClient): { stop(): Promise<void> } {
  const pollers: Poller[] = functions.flatMap((spec) => {
    if (spec.trigger.kind !== 'queue') return [];
    const queue = provisioned[spec.trigger.queue];
    const lambda = new LocalLambda(spec);
    return [
      startPoller({
        sqs,
        queueUrl: queue.url,
        queueArn: queue.arn,
        region: REGION,
        batchSize: spec.trigger.batchSize,
        maxBatchingWindowSeconds: spec.trigger.maxBatchingWindowSeconds,
        maxConcurrency: spec.trigger.maxConcurrency,
        invoke: (event: SQSEvent) => lambda.invoke(event),
        onError: (error) => logFunctionError(spec.id, error),
      }),
    ];
  });
  return { stop: async () => void (await Promise.all(pollers.map((p) => p.stop()))) };
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

export async function startTwin(options: TwinOptions): Promise<Twin> {
  // The SDK versions pinned here support Node 20; its notice about future versions is noise in the twin.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const [redis, database, emulator] = await Promise.all([
    startRedis(options.stateDir, options.durableRedis ?? true),
    startDatabase(options.stateDir, options.database),
    startEmulator(options.stateDir),
  ]);
  const stopServices = () => Promise.all([redis.stop(), database.stop(), emulator.stop()]);
  try {
    const clientOptions = { region: REGION, endpoint: emulator.url, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };
    const sqs = new SQSClient(clientOptions);
    const s3 = new S3Client({ ...clientOptions, forcePathStyle: true });
    const provisioned = await provision(sqs, s3);
    await migrate(database.url);

    // Handlers read their configuration at import, as on a Lambda cold start, so this comes first.
    Object.assign(process.env, functionEnvironment({ redis, database, emulator }, provisioned));
    await seed(database.url);

    const lambdas = new Map<string, LocalLambda>(
      functions.filter((spec) => spec.trigger.kind !== 'queue').map((spec) => [spec.id, new LocalLambda(spec)]),
    );
    const httpRoutes: HttpRoute[] = functions.flatMap((spec: FunctionSpec) => {
      if (spec.trigger.kind !== 'http') return [];
      const lambda = lambdas.get(spec.id)!;
      return [{ method: spec.trigger.method, path: spec.trigger.path, invoke: (event: APIGatewayProxyEventV2) => lambda.invoke(event) }];
    });
    const mailRoutes: MailRoute[] = functions.flatMap((spec) => {
      if (spec.trigger.kind !== 'ses') return [];
      const lambda = lambdas.get(spec.id)!;
      return [{ domain: TWIN_INBOUND_DOMAIN, functionArn: functionArnOf(`surge-${spec.id}`), invoke: (event) => lambda.invoke(event) }];
    });
    const ceiling = new LocalLambda(ceilingSpec, async () => async () => ({ statusCode: 200, body: '{"ok":true}' }));
    httpRoutes.push({ method: 'GET', path: CEILING_PATH, invoke: (event) => ceiling.invoke(event) });
    if (options.baselines) {
      const { baselines, baselineMailDomain } = await import('../../load/baselines/table');
      for (const spec of baselines) {
        const lambda = new LocalLambda(spec, spec.load);
        if (spec.trigger.kind === 'http') {
          httpRoutes.push({ method: spec.trigger.method, path: spec.trigger.path, invoke: (event) => lambda.invoke(event) });
        } else if (spec.trigger.kind === 'ses') {
          mailRoutes.push({ domain: baselineMailDomain(TWIN_INBOUND_DOMAIN), functionArn: functionArnOf(spec.id), invoke: (event) => lambda.invoke(event) });
        }
      }
    }
    await Promise.all([...lambdas.values()].map((l) => l.warm()));

    const gateway: Gateway = await startGateway(httpRoutes, options.port, logFunctionError);
    const smtp = await startSmtpListener({
      port: options.smtpPort ?? inboundMail.smtpPort,
      routes: mailRoutes,
      maxMessageBytes: SES_MAX_MESSAGE_BYTES,
      verdicts: options.verdicts ?? passingVerdicts(),
      store: async (messageId, raw) => {
        await s3.send(new PutObjectCommand({ Bucket: RAW_MAIL_BUCKET, Key: `${inboundMail.prefix}${messageId}`, Body: raw, ContentType: 'message/rfc822' }));
      },
      onError: (error) => logFunctionError('smtp', error),
    }).catch(async (error: Error) => {
      await gateway.close();
      throw error;
    });

    const consumers = await (async (): Promise<{ pid?: number; stop(): Promise<void> } | undefined> => {
      switch (options.consumers ?? 'process') {
        case 'off':
          return undefined;
        case 'in-process':
          return startConsumers(provisioned, sqs);
        case 'process': {
          const entry = new URL('./consumers.ts', import.meta.url).pathname;
          const proc = spawnService(process.execPath, ['--import', 'tsx', entry], join(options.stateDir, 'consumers.log'), {
            ...process.env,
            [QUEUES_ENV]: JSON.stringify(provisioned),
          });
          await readyLine(proc, /^ready/m, join(options.stateDir, 'consumers.log')).catch(async (error: Error) => {
            await Promise.all([gateway.close(), smtp.close()]);
            throw error;
          });
          return { pid: proc.child.pid, stop: proc.stop };
        }
      }
    })();

    const schedules = functions.flatMap((spec) => {
      if (spec.trigger.kind !== 'schedule') return [];
      const lambda = lambdas.get(spec.id)!;
      const timer = setInterval(() => {
        lambda.invoke(scheduledEvent(spec.id)).catch((error: Error) => logFunctionError(spec.id, error));
      }, spec.trigger.rateMinutes * 60_000);
      timer.unref();
      return [timer];
    });

    return {
      url: gateway.url,
      redisUrl: redis.url,
      databaseUrl: database.url,
      emulatorUrl: emulator.url,
      smtpUrl: smtp.url,
      inboundDomain: TWIN_INBOUND_DOMAIN,
      queues: provisioned,
      pids: { gateway: process.pid, consumers: consumers?.pid ?? (consumers ? process.pid : undefined), redis: redis.pid, database: database.pid, emulator: emulator.pid },
      async stop() {
        for (const timer of schedules) clearInterval(timer);
        await Promise.all([gateway.close(), smtp.close()]);
        await consumers?.stop();
        await stopServices();
      },
    };
  } catch (error) {
    await stopServices();
    throw error;
  }
}
