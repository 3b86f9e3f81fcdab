/** The stack's the HTTP API (infra/stack/api.ts). */
import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { App, Stack } from 'aws-cdk-lib';
import { Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { functions, inFlightCeiling, type FunctionSpec, type RouteThrottle, type Trigger } from '../../../functions/table';
import { Api } from '../../../infra/stack/api';
import { KEPT_BY } from '../../../infra/stack/stage';
import { template, resources, ofType, logicalIdOf, waitsFor } from '../../support/dev-stack';

describe('the CDK app (dev)', () => {
  it('routes every HTTP trigger of the table, and nothing else', () => {
    const expected = functions.flatMap((f) => (f.trigger.kind === 'http' ? [`${f.trigger.method} ${f.trigger.path}`] : []));
    expect(
      ofType('AWS::ApiGatewayV2::Route')
        .map((r) => r.Properties.RouteKey)
        .sort(),
    ).toEqual(expected.sort());
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      DefaultRouteSettings: Match.objectLike({ ThrottlingRateLimit: Match.anyValue() }),
      AccessLogSettings: Match.objectLike({ DestinationArn: Match.anyValue() }),
    });
  });

  it('throttles each route the table throttles (sign-in, sign-up, orders, coupons) at its own rate, below the stage’s', () => {
    const [stage] = ofType('AWS::ApiGatewayV2::Stage');
    const throttled = functions.flatMap((f) =>
      f.trigger.kind === 'http' && f.trigger.throttle ? [[`${f.trigger.method} ${f.trigger.path}`, f.trigger.throttle] as const] : [],
    );

    expect(throttled.map(([key]) => key).sort()).toEqual(['POST /deals/{dealId}/coupons', 'POST /items/{itemId}/orders', 'POST /sessions', 'POST /users']);
    expect(stage!.Properties.RouteSettings).toEqual(
      Object.fromEntries(throttled.map(([key, t]) => [key, { ThrottlingRateLimit: t.rateLimit, ThrottlingBurstLimit: t.burstLimit }])),
    );
    for (const [, t] of throttled) expect(t.rateLimit).toBeLessThan(stage!.Properties.DefaultRouteSettings.ThrottlingRateLimit);
    // The stage names the routes in its settings, so CloudFormation makes them first.
    const routeIds = Object.keys(resources).filter(
      (id) => resources[id]!.Type === 'AWS::ApiGatewayV2::Route' && throttled.some(([key]) => resources[id]!.Properties.RouteKey === key),
    );
    expect(routeIds).toHaveLength(4);
    for (const id of routeIds) expect(waitsFor(logicalIdOf('AWS::ApiGatewayV2::Stage'))).toContain(id);
  });

  it('keeps a burst and a p99’s worth of each route whose function has a ceiling within it, so clients meet API Gateway’s 429 rather than a throttled Lambda’s 500', () => {
    const ceilinged = functions.filter((f) => f.trigger.kind === 'http' && inFlightCeiling(f) !== undefined);

    expect(Object.fromEntries(ceilinged.map((f) => [f.id, inFlightCeiling(f)]))).toEqual({ 'create-session': 20, 'create-order': 384, 'create-coupon': 384 });
    const [stage] = ofType('AWS::ApiGatewayV2::Stage');
    for (const spec of ceilinged) {
      const trigger = spec.trigger as Extract<Trigger, { kind: 'http' }>;
      const settings = stage!.Properties.RouteSettings[`${trigger.method} ${trigger.path}`];
      const inFlightAtP99 = settings.ThrottlingBurstLimit + (settings.ThrottlingRateLimit * trigger.throttle!.p99BudgetMs!) / 1000;
      expect(inFlightAtP99, spec.id).toBeLessThanOrEqual(inFlightCeiling(spec)!);
    }
    // The reserving routes: one environment's 128 at once, and 4,000 a second, which the other 256 slots carry at a 64 ms p99.
    expect(stage!.Properties.RouteSettings['POST /items/{itemId}/orders']).toEqual({ ThrottlingRateLimit: 4_000, ThrottlingBurstLimit: 128 });
    // Sign-in: 5 at once and 100 a second, 15 at a 150 ms p99, within its cap of 20.
    expect(stage!.Properties.RouteSettings['POST /sessions']).toEqual({ ThrottlingRateLimit: 100, ThrottlingBurstLimit: 5 });
  });

  it('refuses to route a function on Managed Instances without a throttle within its environments’ slots', () => {
    // Prepare
    const order = functions.find((f) => f.id === 'create-order')!;
    const unthrottled = { ...order, trigger: { kind: 'http', method: 'POST', path: '/items/{itemId}/orders' } } as const;
    const withThrottle = (throttle: RouteThrottle) => ({ ...order, trigger: { ...unthrottled.trigger, throttle } });
    const tooBursty = withThrottle({ rateLimit: 4_000, burstLimit: 385, p99BudgetMs: 64 });
    const tooFastForItsP99 = withThrottle({ rateLimit: 4_001, burstLimit: 128, p99BudgetMs: 64 });
    const noP99 = withThrottle({ rateLimit: 10, burstLimit: 10 });
    const stack = new Stack(new App());
    const api = new Api(stack, { kept: KEPT_BY.dev, name: 'surge-test' });
    const target = new LambdaFunction(stack, 'Fn', {
      runtime: Runtime.NODEJS_20_X,
      handler: 'index.handler',
      code: Code.fromInline('exports.handler = async () => ({})'),
    });

    // Act
    const route = (spec: FunctionSpec) => () => api.route(spec, spec.trigger as Extract<Trigger, { kind: 'http' }>, target);

    // Assess
    expect(route(unthrottled)).toThrow(/create-order: a route whose function takes at most 384 invocations at once needs a throttle/);
    expect(route(tooBursty)).toThrow(/at most 384/);
    expect(route(tooFastForItsP99)).toThrow(/at most 384/);
    expect(route(noP99)).toThrow(/at most 384/);
    expect(route(order)).not.toThrow();
  });
});
