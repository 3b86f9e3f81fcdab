import { Duration, NestedStack, type Stack } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData, type IAlarm } from 'aws-cdk-lib/aws-cloudwatch';
import { LambdaApplication, LambdaDeploymentConfig, LambdaDeploymentGroup, type ILambdaDeploymentConfig } from 'aws-cdk-lib/aws-codedeploy';
import { ManagedPolicy, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Alias, type Function as LambdaFn, type IFunction } from 'aws-cdk-lib/aws-lambda';
import type { FunctionSpec } from '../../functions/table';

/**
 * How a deploy moves the API's and the queue's functions to new code (`-c deploy=…`):
 * - `canary` (prod's default): 10 % of invocations for 5 minutes, then all, unless an alarm that
 *   means harm fires first, which rolls every shifted function back. For a sale: one short window
 *   in which two versions serve, and a tenth of a sale's traffic is thousands of requests a
 *   minute, enough for the alarms to tell within the window; linear would keep both versions
 *   serving three times as long for no better signal.
 * - `linear`: 10 % more every minute, ten minutes in all: where traffic is too thin for a canary's
 *   tenth to show anything in 5 minutes.
 * - `all-at-once` (dev's default): no alias, every function replaced as the deploy reaches it.
 */
export const DEPLOY_MODES = ['canary', 'linear', 'all-at-once'] as const;
export type DeployMode = (typeof DEPLOY_MODES)[number];

/** The alias the API's routes and the queue's event source mapping invoke, which CodeDeploy shifts. */
export const LIVE_ALIAS = 'live';

const CONFIG_OF: Record<Exclude<DeployMode, 'all-at-once'>, ILambdaDeploymentConfig> = {
  canary: LambdaDeploymentConfig.CANARY_10PERCENT_5MINUTES,
  linear: LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_1MINUTE,
};

/** A deployment group takes at most this many alarms. */
const GROUP_ALARMS_MAX = 10;

interface Shifted {
  spec: FunctionSpec;
  fn: LambdaFn;
  alias: Alias;
  /** Fires on any failed invocation of the version being deployed: a throw, a timeout, a crash. */
  versionErrors: Alarm;
}

/**
 * Gradual deploys of the functions the API and the reservation queue invoke: each has an alias
 * (LIVE_ALIAS) its trigger invokes, shifted from the old version to the new by a CodeDeploy
 * deployment group, rolled back on its alarms. Both versions take requests and drain the queue
 * while it shifts, which the hand-off's versions (shared/reservations/hand-off.ts) and the
 * migrations' expand-then-contract rule make safe. The migration runs before any shift: each
 * function, and so its new version, waits for it (stack.ts, migrateBefore).
 *
 * The versions are the functions' own (in the stack, beside them); the aliases, what invokes them
 * (the routes' permissions, the queue's mapping), their alarms and deployment groups are in a
 * nested stack: they are five resources a function, and the stack beside them would pass
 * CloudFormation's 500. Nothing stateful is in it, and nothing moved there from the stack.
 */
export class GradualDeploys {
  private readonly shifted: Shifted[] = [];
  private nested?: { stack: NestedStack; application: LambdaApplication; role: Role };

  constructor(
    private readonly stack: Stack,
    readonly mode: DeployMode,
  ) {}

  /** The nested stack, its one CodeDeploy application and the one role every deployment group uses. */
  private deploys() {
    if (!this.nested) {
      const stack = new NestedStack(this.stack, 'GradualDeploys', { description: 'Surge: aliases of the API and queue functions, shifted by CodeDeploy' });
      const application = new LambdaApplication(stack, 'Application');
      const role = new Role(stack, 'DeployRole', {
        assumedBy: new ServicePrincipal('codedeploy.amazonaws.com'),
        managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSCodeDeployRoleForLambdaLimited')],
      });
      this.nested = { stack, application, role };
    }
    return this.nested;
  }

  /** What a function's trigger invokes: its live alias where it deploys gradually, the function itself otherwise. */
  target(spec: FunctionSpec, fn: LambdaFn): IFunction {
    if (this.mode === 'all-at-once' || (spec.trigger.kind !== 'http' && spec.trigger.kind !== 'queue')) return fn;
    const { stack } = this.deploys();
    const alias = new Alias(stack, `${spec.id}Live`, { aliasName: LIVE_ALIAS, version: fn.currentVersion });
    const versionErrors = new Alarm(stack, `${spec.id}NewVersionErrors`, {
      metric: fn.currentVersion.metricErrors({ period: Duration.minutes(1), statistic: 'Sum' }),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      alarmDescription: `The version of ${spec.id} being deployed failed an invocation: the deploy rolls back. Runbook: docs/runbook.md, "Deploying during a sale".`,
    });
    this.shifted.push({ spec, fn, alias, versionErrors });
    return alias;
  }

  /**
   * Each alias's deployment group, rolled back automatically when its deploy fails or one of its
   * alarms fires: its own version's errors, and the alarms `harmOf` gives for the function (the
   * API's 5xx, the hand-off's failures, the writer's DLQ).
   */
  deploymentGroups(harmOf: (spec: FunctionSpec) => IAlarm[]): LambdaDeploymentGroup[] {
    if (this.mode === 'all-at-once' || this.shifted.length === 0) return [];
    const config = CONFIG_OF[this.mode];
    const { stack, application, role } = this.deploys();
    return this.shifted.map(({ spec, alias, versionErrors }) => {
      const alarms = [versionErrors, ...harmOf(spec)];
      if (alarms.length > GROUP_ALARMS_MAX) throw new Error(`${spec.id}: ${alarms.length} rollback alarms, past a deployment group's ${GROUP_ALARMS_MAX}`);
      return new LambdaDeploymentGroup(stack, `${spec.id}Deploy`, {
        application,
        role,
        alias,
        deploymentConfig: config,
        alarms,
        autoRollback: { failedDeployment: true, stoppedDeployment: true, deploymentInAlarm: true },
      });
    });
  }
}
