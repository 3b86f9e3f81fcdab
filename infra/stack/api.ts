import type { Stack } from 'aws-cdk-lib';
import { HttpApi, HttpMethod, HttpStage, type CfnStage } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DEFAULT_ROUTE_THROTTLE, inFlightCeiling, type FunctionSpec, type RouteThrottle, type Trigger } from '../../functions/table';
import type { Kept } from './stage';

type HttpTrigger = Extract<Trigger, { kind: 'http' }>;

/** Whether the invocations a throttle lets in, a burst and then its rate over the function's p99, fit a ceiling. */
const withinCeiling = (throttle: RouteThrottle | undefined, ceiling: number): boolean =>
  throttle?.p99BudgetMs !== undefined && throttle.burstLimit + (throttle.rateLimit * throttle.p99BudgetMs) / 1000 <= ceiling;

/**
 * The HTTP API: one route per HTTP trigger of functions/table.ts, on a stage throttled as a whole
 * and per route (sign-in, sign-up, orders, coupons), access-logged. Its resources are the stack's own children (see stack.ts).
 */
export class Api {
  readonly api: HttpApi;
  readonly stage: HttpStage;
  /** CloudFormation's own names: RouteSettings is a map CDK passes through as it is. */
  private readonly routeThrottles: Record<string, { ThrottlingRateLimit: number; ThrottlingBurstLimit: number }> = {};

  /** name: the API's, told apart from another stage's in the console (namePrefixOf in stage.ts). */
  constructor(stack: Stack, props: { kept: Kept; name: string }) {
    this.api = new HttpApi(stack, 'Api', { apiName: props.name, createDefaultStage: false });
    const accessLogs = new LogGroup(stack, 'ApiAccessLogs', { retention: RetentionDays.ONE_MONTH, removalPolicy: props.kept.logs });
    this.stage = new HttpStage(stack, 'DefaultStage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      throttle: DEFAULT_ROUTE_THROTTLE,
    });
    const cfnStage = this.stage.node.defaultChild as CfnStage;
    cfnStage.accessLogSettings = {
      destinationArn: accessLogs.logGroupArn,
      format: JSON.stringify({
        requestId: '$context.requestId',
        ip: '$context.identity.sourceIp',
        routeKey: '$context.routeKey',
        status: '$context.status',
        latency: '$context.responseLatency',
        integrationError: '$context.integrationErrorMessage',
      }),
    };
    // Filled in as route() adds throttled routes.
    cfnStage.routeSettings = this.routeThrottles;
  }

  /** Routes a function's HTTP trigger to it, with the route's own throttle if the table gives one. */
  route(spec: FunctionSpec, trigger: HttpTrigger, fn: IFunction): void {
    // Past its ceiling (a cap, or Managed Instances' slots) Lambda throttles, and API Gateway turns
    // that into a 500: the route's own throttle must answer 429 first, so a burst and a p99's worth
    // of its rate may not exceed the ceiling.
    const ceiling = inFlightCeiling(spec);
    if (ceiling !== undefined && !withinCeiling(trigger.throttle, ceiling)) {
      throw new Error(
        `${spec.id}: a route whose function takes at most ${ceiling} invocations at once needs a throttle whose burst and p99's worth of its rate are within them`,
      );
    }
    const routes = this.api.addRoutes({
      path: trigger.path,
      methods: [HttpMethod[trigger.method]],
      integration: new HttpLambdaIntegration(`${spec.id}Integration`, fn),
    });
    if (trigger.throttle) {
      this.routeThrottles[`${trigger.method} ${trigger.path}`] = {
        ThrottlingRateLimit: trigger.throttle.rateLimit,
        ThrottlingBurstLimit: trigger.throttle.burstLimit,
      };
      // The stage's settings name the route, which must exist first.
      for (const route of routes) this.stage.node.addDependency(route);
    }
  }
}
