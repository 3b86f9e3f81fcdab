/**
 * The whole of Surge on this machine, as startTwin composes it step by step: the stores, the
 * queues and secrets, the functions, the gateway's and SMTP listener's routes, the consumers and
 * the schedules. Each step's module says how.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { QueueName } from '../../functions/table';
import { contractUnderTest } from '../openapi/contract-under-test';
import { functionEnvironment, TWIN_INBOUND_DOMAIN, TWIN_REGION } from './deployment';
import { EmfCollector, onStdoutLine } from './lambda/emf';
import { extraFunctionRoutes } from './extra-functions';
import { logFunctionError } from './lambda/function-errors';
import { directRunners, functionRuntime, migrateDatabase } from './function-runners';
import { listenEdge, type Edge } from './edge/edge';
import { edgeFromTemplate } from './edge/from-template';
import { listenGateway } from './events/gateway';
import { compileRoutes } from './events/http-routes';
import { startInboundMail } from './inbound-mail';
import { startLambdaApi } from './events/lambda-api';
import type { TwinOptions } from './options';
import { provision, provisionAsyncFailures, type ProvisionedQueue } from './provision';
import { startQueueConsumers } from './queue-consumers';
import { twinHttpRoutes, twinMailRoutes } from './routes';
import type { FunctionRunner, FunctionRuntime } from './lambda/runners';
import { startSchedules } from './schedules';
import { putSecrets, putTwinSecrets } from './secrets';
import { seed } from './seed';
import { startStores, storeCredentials } from './stores';

export interface Twin {
  /** Where clients call it: the edge's address with --edge, else the gateway's. */
  url: string;
  /** The gateway's own address (API Gateway's endpoint); with --edge, a request there has no origin header and is refused. */
  gatewayUrl: string;
  redisUrl: string;
  databaseUrl: string;
  emulatorUrl: string;
  smtpUrl: string;
  /** Lambda's Invoke API for the functions not behind a queue, for operators' tools (events/lambda-api.ts). */
  lambdaUrl: string;
  inboundDomain: string;
  queues: Record<QueueName, ProvisionedQueue>;
  /** Processes the twin started, by service, for CPU accounting in benchmarks; current after a restart. */
  pids: Record<string, number | undefined>;
  /** How the functions run, for the consumers' process and for benchmarks. */
  runtime: FunctionRuntime;
  /** The demo reader's Atom feed of all their newsletters, a path under url (npm start prints it). */
  demoFeedPath?: string;
  /** The twin's own view of the stores, with their credentials, when they are AWS-like. */
  admin: { redisUrl: string; databaseUrl: string; ca?: string };
  stop(): Promise<void>;
}

export async function startTwin(options: TwinOptions): Promise<Twin> {
  // The SDK versions pinned here support Node 20; its notice about future versions is noise in the twin.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const secure = await storeCredentials(options);
  // Under test, every answer of a route is held to the API's document (infra/openapi/contract-under-test.ts).
  // Behind the edge, the gateway is API Gateway's own endpoint, on a port of its own.
  const gateway = await listenGateway(options.edge ? 0 : options.port, logFunctionError, {
    check: contractUnderTest(),
    routeThrottles: options.bundles ?? false,
  });
  let edge: Edge | undefined;
  const front = async () => {
    await Promise.all([gateway.close(), edge?.close()]);
  };
  // The template is synthesized (or found) while the stores start.
  const edgePlan = options.edge ? edgeFromTemplate() : undefined;
  edgePlan?.catch(() => undefined);
  try {
    if (options.edge) edge = await listenEdge(options.port);
  } catch (error) {
    await front();
    throw error;
  }
  options.onListening?.((edge ?? gateway).url);
  const stores = await startStores(options, secure).catch(async (error: Error) => {
    await front();
    throw error;
  });
  const { redis, database, emulator } = stores;
  const runners: FunctionRunner[] = [];
  // What the functions print: in this process (source mode, bundle mode's workers) and the consumers'.
  const emf = new EmfCollector();
  const stopTap = onStdoutLine((line) => emf.take(line));
  try {
    const clientOptions = { region: TWIN_REGION, endpoint: emulator.url, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };
    const sqs = new SQSClient(clientOptions);
    const s3 = new S3Client({ ...clientOptions, forcePathStyle: true });
    const provisioned = await provision(sqs, s3, options.queuePrefix);
    await putTwinSecrets(emulator.url, secure, options.bundles ?? false);
    const plan = await edgePlan;
    if (plan) await putSecrets(emulator.url, { [plan.originSecret.name]: plan.originSecret.value });
    const runtime = await functionRuntime(options, stores, provisioned, plan?.originSecret.name);

    // The twin's own code (and every function, in source mode) reads this process's environment.
    Object.assign(process.env, functionEnvironment(stores, provisioned, options.functionsSqsEndpoint, plan?.originSecret.name));
    const lambdas = directRunners(runtime);
    runners.push(...lambdas.values());
    await migrateDatabase(runtime, lambdas, database);
    const { demoFeedPath } = await seed();

    const extra = extraFunctionRoutes(options.extraFunctions ?? []);
    const mailRoutes = [...twinMailRoutes(lambdas, sqs, await provisionAsyncFailures(sqs, options.queuePrefix)), ...extra.mail];
    // Every function warm before traffic; in bundle mode their inits take turns for this machine's
    // cores (see InitSlots), each held to Lambda's init limit from when its own begins.
    await Promise.all([...lambdas.values()].map((lambda) => lambda.warm()));

    const smtp = await startInboundMail(s3, mailRoutes, options);
    const consumers = await startQueueConsumers(options, provisioned, sqs, runtime, emf).catch(async (error: Error) => {
      await smtp.close();
      throw error;
    });
    const routes = compileRoutes([...twinHttpRoutes(lambdas, emf, consumers?.invocations), ...extra.http]);
    const schedules = options.schedules === false ? { stop: () => undefined } : startSchedules(lambdas);
    const lambdaApi = await startLambdaApi(0, lambdas);

    // Ready: the stores are seeded, and the SMTP listener and the consumers are up.
    gateway.serve(routes);
    if (plan) {
      edge!.serve({
        distribution: plan.distribution,
        ...(plan.webAcl ? { webAcl: plan.webAcl } : {}),
        originUrl: gateway.url,
        secretValues: { [plan.originSecret.logicalId]: plan.originSecret.value },
      });
    }
    return {
      url: (edge ?? gateway).url,
      gatewayUrl: gateway.url,
      redisUrl: redis.adminUrl,
      databaseUrl: database.adminUrl,
      emulatorUrl: emulator.url,
      smtpUrl: smtp.url,
      lambdaUrl: lambdaApi.url,
      inboundDomain: TWIN_INBOUND_DOMAIN,
      demoFeedPath,
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
        schedules.stop();
        await Promise.all([front(), smtp.close(), lambdaApi.close()]);
        await consumers?.stop();
        await Promise.all(runners.map((r) => r.stop()));
        await stores.stop();
        stopTap();
      },
    };
  } catch (error) {
    await Promise.all([front(), ...runners.map((r) => r.stop())]);
    await stores.stop();
    stopTap();
    throw error;
  }
}
