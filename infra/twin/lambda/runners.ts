import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { envNeedsOf, functions, type FunctionSpec } from '../../../functions/table';
import { environmentFor, serviceEnvironment, type Deployment } from '../../../shared/platform/config';
import { BundleLambda } from './bundle-lambda';
import { LocalLambda } from './lambda';

/** How the twin runs the table's functions. */
export type FunctionRuntime =
  /** Their TypeScript sources, in the twin's own process, sharing its environment (the default). */
  | { kind: 'source' }
  /**
   * Their bundles (what `cdk deploy` uploads, built into dir/<id>/), each in worker threads whose
   * environment is exactly its row's for this deployment; with `instances`, in Lambda's instance model.
   */
  | { kind: 'bundles'; dir: string; deployment: Deployment; runtimeEnv: Record<string, string>; instances?: number };

export interface FunctionRunner {
  readonly spec: FunctionSpec;
  warm(): Promise<unknown>;
  invoke(event: unknown): Promise<unknown>;
  stop(): Promise<void>;
}

/** The fault suite's switches (shared/platform/faults.ts), passed on to the functions only when set: no deployment sets them. */
const FAULT_VARIABLES = ['SURGE_FAULTS', 'SURGE_FAULT_LOG'] as const;

/** What one function's instances see: Lambda's own variables, then its row's needs and nothing else. */
export function lambdaEnvironment(spec: FunctionSpec, runtimeEnv: Record<string, string>, deployment: Deployment): Record<string, string> {
  const faults = FAULT_VARIABLES.flatMap((name) => (process.env[name] ? [[name, process.env[name]] as const] : []));
  return {
    ...runtimeEnv,
    AWS_LAMBDA_FUNCTION_NAME: `surge-${spec.id}`,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(spec.memoryMb),
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    ...serviceEnvironment,
    ...environmentFor(envNeedsOf(spec), deployment),
    ...Object.fromEntries(faults),
  };
}

export function runnerFor(spec: FunctionSpec, runtime: FunctionRuntime): FunctionRunner {
  if (runtime.kind === 'source') {
    const lambda = new LocalLambda(spec);
    return { spec, warm: () => lambda.warm(), invoke: (event) => lambda.invoke(event), stop: async () => undefined };
  }
  return new BundleLambda(
    spec,
    pathToFileURL(resolve(runtime.dir, spec.id, 'index.mjs')).href,
    lambdaEnvironment(spec, runtime.runtimeEnv, runtime.deployment),
    {
      ...(runtime.instances ? { instances: runtime.instances } : {}),
    },
  );
}

/** The runner of one function of the table, by id. */
export function runnerOf(id: string, runtime: FunctionRuntime): FunctionRunner {
  const spec = functions.find((f) => f.id === id);
  if (!spec) throw new Error(`No function ${id} in the table`);
  return runnerFor(spec, runtime);
}
