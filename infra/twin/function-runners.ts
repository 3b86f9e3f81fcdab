/** The table's functions as the twin runs them: from their sources in this process, or as the bundles `cdk deploy` uploads. */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { functions, type QueueName } from '../../functions/table';
import { migrate } from '../../shared/platform/db/migrate';
import { buildFunctionBundle } from '../bundling';
import { writeApiFiles } from '../openapi/files';
import { runtimeEnvironment, twinDeployment, type TwinStores } from './deployment';
import type { TwinOptions } from './options';
import type { ProvisionedQueue } from './provision';
import { runnerFor, type FunctionRunner, type FunctionRuntime } from './lambda/runners';
import { triggerEvent } from './schedules';
import type { Service } from './services/services';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** How the functions run: their sources, or their bundles (built now) with exactly their rows' environments. */
export async function functionRuntime(
  options: Pick<TwinOptions, 'bundles' | 'stateDir' | 'lambdaInstances' | 'functionsSqsEndpoint'>,
  stores: TwinStores,
  provisioned: Record<QueueName, ProvisionedQueue>,
  originSecretId?: string,
): Promise<FunctionRuntime> {
  // Source mode reads the published files from dist/ (shared/api/published.ts): built now, from the sources it runs.
  if (!options.bundles) {
    await writeApiFiles(join(root, 'dist'));
    return { kind: 'source' };
  }
  return {
    kind: 'bundles',
    dir: await buildBundles(join(options.stateDir, 'bundles')),
    deployment: twinDeployment(stores, provisioned, 'functions', {
      ...(options.lambdaInstances ? { lambdaInstances: options.lambdaInstances } : {}),
      ...(originSecretId ? { originSecretId } : {}),
    }),
    runtimeEnv: runtimeEnvironment(stores.emulator.url, options.functionsSqsEndpoint),
    ...(options.lambdaInstances ? { instances: options.lambdaInstances } : {}),
  };
}

/** Every function's bundle, built as `cdk deploy` builds it, side by side under dir. */
async function buildBundles(dir: string): Promise<string> {
  await Promise.all(functions.map((spec) => buildFunctionBundle(root, spec, join(dir, spec.id))));
  return dir;
}

/** A runner for every function not behind a queue, by function id (the queue consumers have their own, see queue-consumers.ts). */
export function directRunners(runtime: FunctionRuntime): Map<string, FunctionRunner> {
  return new Map(functions.filter((spec) => spec.trigger.kind !== 'queue').map((spec) => [spec.id, runnerFor(spec, runtime)]));
}

/** Migrates the database: in bundle mode through the deploy trigger, as `cdk deploy` does before anything takes traffic. */
export async function migrateDatabase(
  runtime: FunctionRuntime,
  runners: Map<string, FunctionRunner>,
  database: Pick<Service, 'adminUrl' | 'adminTls'>,
): Promise<void> {
  if (runtime.kind === 'bundles') {
    for (const spec of functions.filter((f) => f.trigger.kind === 'deploy')) await runners.get(spec.id)!.invoke(triggerEvent(spec));
  } else {
    await migrate({ url: database.adminUrl, ...(database.adminTls ? { tls: database.adminTls } : {}) });
  }
}
