import { join } from 'node:path';
import { CfnResource, Duration, type RemovalPolicy, type Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Architecture, CapacityProvider, CfnFunction, InstanceTypeFilter, Runtime, type Function as LambdaFn } from 'aws-cdk-lib/aws-lambda';
import { LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { besideBuildCommand, besideModules, BUNDLE, bundleFileCopies } from '../bundling';
import { entryFile, envNeedsOf, type EnvNeed, type FunctionSpec } from '../../functions/table';
import { environmentFor, serviceEnvironment, type Deployment } from '../../shared/platform/config';

const root = join(import.meta.dirname, '..', '..');

/**
 * esbuild bundles each function locally (no Docker): minified, tree-shaken, ESM for Node 20 so the
 * same code runs in the twin. Lua scripts and migrations are files the code reads beside itself.
 */
function bundling(spec: FunctionSpec) {
  return {
    minify: true,
    sourceMap: true,
    // The map maps names and lines; the sources themselves are in the repository.
    sourcesContent: false,
    format: OutputFormat.ESM,
    forceDockerBundling: false,
    // Warnings and errors only, as the bundles the twin builds (ESBUILD_OPTIONS): not a summary per function on every synth.
    logLevel: LogLevel.WARNING,
    target: BUNDLE.target,
    mainFields: [...BUNDLE.mainFields],
    banner: BUNDLE.banner,
    externalModules: [...BUNDLE.externalModules],
    esbuildArgs: Object.fromEntries(Object.entries(BUNDLE.alias).map(([name, path]) => [`--alias:${name}`, path])),
    commandHooks: {
      beforeBundling: () => [],
      beforeInstall: () => [],
      afterBundling: (_input: string, output: string) => [
        ...bundleFileCopies(root, spec.id, output),
        ...besideModules(spec).map((module) => besideBuildCommand(root, module, output)),
      ],
    },
  };
}

export interface FunctionsProps {
  /** Each function is named `<namePrefix>-<id>`. */
  namePrefix: string;
  vpc: ec2.IVpc;
  securityGroup: ec2.ISecurityGroup;
  logsRemovalPolicy: RemovalPolicy;
  /** Where each need points on AWS (shared/platform/config.ts): no password, only the secrets' ids. */
  deployment: Deployment;
  /** The secret holding each need's credentials: a function may read those of its needs only. */
  secretOf: Partial<Record<EnvNeed, ISecret>>;
  /** Load the shipped source maps at start (`--enable-source-maps`). */
  sourceMapStackTraces: boolean;
  /** Reserve each capped function's concurrency (the table's concurrencyCap). */
  reserveConcurrency: boolean;
  /**
   * What invokes the functions: each function itself (`all-at-once`), or each one's alias on a
   * published version (a gradual deploy, stack/gradual.ts). A managed function keeps its
   * environments on what is invoked, and only there.
   */
  invoked: 'function' | 'alias';
}

/**
 * A function's name. One on Managed Instances has a name of its own: Lambda cannot move an existing
 * function onto a capacity provider, so a stack that had it on Lambda's default compute replaces
 * it, and CloudFormation replaces a named resource only under a new name.
 */
export const functionNameOf = (namePrefix: string, spec: FunctionSpec) => `${namePrefix}-${spec.id}${spec.managedInstances ? '-managed' : ''}`;

/**
 * The functions of functions/table.ts: ARM64, nodejs24.x, in the isolated subnets, each logging to
 * a group of the stack, its environment the shared map of its needs (shared/platform/config.ts).
 * Those the table puts on Lambda Managed Instances (the reserving ones) run in the capacity
 * provider's execution environments, in the same subnets and security group. Its resources are the
 * stack's own children (see stack.ts).
 */
export class Functions {
  private readonly variables: Record<string, string>;
  private capacity?: CapacityProvider;

  constructor(
    private readonly stack: Stack,
    private readonly props: FunctionsProps,
  ) {
    this.variables = {
      ...serviceEnvironment,
      // Loading source maps at start costs every cold start ~50–70 ms, so only on request.
      ...(props.sourceMapStackTraces ? { NODE_OPTIONS: '--enable-source-maps' } : {}),
    };
  }

  /**
   * The instances the managed functions run on, made with the first: Graviton, as the other
   * functions are, of the c7g family alone (2 GiB a vCPU, as the environments ask, and the price
   * `npm run cost` takes), scaled by Lambda on their CPU (the default, Auto), in the functions'
   * subnets and security group, which the cache and the database proxy let in.
   */
  private capacityProvider(): CapacityProvider {
    const { props } = this;
    this.capacity ??= new CapacityProvider(this.stack, 'ReservingCapacity', {
      subnets: props.vpc.selectSubnets({ subnetType: ec2.SubnetType.PRIVATE_ISOLATED }).subnets,
      securityGroups: [props.securityGroup],
      architectures: [Architecture.ARM_64],
      instanceTypeFilter: InstanceTypeFilter.allow(
        [ec2.InstanceSize.LARGE, ec2.InstanceSize.XLARGE, ec2.InstanceSize.XLARGE2, ec2.InstanceSize.XLARGE4].map((size) =>
          ec2.InstanceType.of(ec2.InstanceClass.C7G, size),
        ),
      ),
    });
    return this.capacity;
  }

  /** One table row's function, which may read the secrets of its needs. */
  add(spec: FunctionSpec): LambdaFn {
    const { props } = this;
    const managed = spec.managedInstances;
    // A managed function's network is its capacity provider's; Lambda takes no VPC of the function's own there.
    const network = managed ? {} : { vpc: props.vpc, vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_ISOLATED }, securityGroups: [props.securityGroup] };
    const fn = new NodejsFunction(this.stack, spec.id, {
      functionName: functionNameOf(props.namePrefix, spec),
      description: spec.description,
      entry: join(root, entryFile(spec)),
      handler: 'handler',
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: spec.memoryMb,
      timeout: Duration.seconds(spec.timeoutSeconds),
      environment: { ...this.variables, ...environmentFor(envNeedsOf(spec), props.deployment) },
      ...network,
      // The version a gradual deploy's alias moves to keeps as many environments running as the table asks.
      ...(managed && props.invoked === 'alias' ? { currentVersionOptions: { minExecutionEnvironments: managed.minEnvironments } } : {}),
      logGroup: new LogGroup(this.stack, `${spec.id}Logs`, { retention: RetentionDays.ONE_MONTH, removalPolicy: props.logsRemovalPolicy }),
      bundling: bundling(spec),
      projectRoot: root,
      depsLockFilePath: join(root, 'package-lock.json'),
      ...(props.reserveConcurrency && spec.concurrencyCap ? { reservedConcurrentExecutions: spec.concurrencyCap } : {}),
    });
    if (managed) {
      this.capacityProvider().addFunction(fn, {
        perExecutionEnvironmentMaxConcurrency: managed.perEnvironmentConcurrency,
        executionEnvironmentMemoryGiBPerVCpu: 2,
        // An unqualified invoke (all-at-once: no alias) reaches Lambda's $LATEST.PUBLISHED, not $LATEST, so it is
        // published and keeps the environments. Behind an alias nothing invokes it: its environments would idle.
        ...(props.invoked === 'function'
          ? { publishToLatestPublished: true, latestPublishedScalingConfig: { minExecutionEnvironments: managed.minEnvironments } }
          : { publishToLatestPublished: false }),
      });
    }
    for (const need of envNeedsOf(spec)) props.secretOf[need]?.grantRead(fn);
    return fn;
  }
}

/**
 * CDK's custom-resource providers (the deploy trigger's, the buckets' auto-delete) are functions
 * Lambda would give a log group of its own at their first run, outside CloudFormation. Each logs
 * to one of the stack's instead, which the function references, so it goes only after the function.
 * Called last, once every provider exists.
 */
export function ownHelperFunctionLogs(stack: Stack, removalPolicy: RemovalPolicy): void {
  const providerHandlers = stack.node
    .findAll()
    .filter((c): c is CfnResource => c instanceof CfnResource && !(c instanceof CfnFunction) && c.cfnResourceType === 'AWS::Lambda::Function');
  for (const handler of providerHandlers) {
    const logs = new LogGroup(handler.node.scope!, 'Logs', { retention: RetentionDays.ONE_MONTH, removalPolicy });
    handler.addPropertyOverride('LoggingConfig', { LogGroup: logs.logGroupName });
  }
}
