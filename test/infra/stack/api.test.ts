/** The stack's the HTTP API (infra/stack/api.ts). */
import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { functions } from '../../../functions/table';
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

  it('throttles each route the table throttles (sign-in, sign-up) at its own rate, below the stage’s', () => {
    const [stage] = ofType('AWS::ApiGatewayV2::Stage');
    const throttled = functions.flatMap((f) =>
      f.trigger.kind === 'http' && f.trigger.throttle ? [[`${f.trigger.method} ${f.trigger.path}`, f.trigger.throttle] as const] : [],
    );

    expect(throttled.map(([key]) => key).sort()).toEqual(['POST /sessions', 'POST /users']);
    expect(stage!.Properties.RouteSettings).toEqual(
      Object.fromEntries(throttled.map(([key, t]) => [key, { ThrottlingRateLimit: t.rateLimit, ThrottlingBurstLimit: t.burstLimit }])),
    );
    for (const [, t] of throttled) expect(t.rateLimit).toBeLessThan(stage!.Properties.DefaultRouteSettings.ThrottlingRateLimit);
    // The stage names the routes in its settings, so CloudFormation makes them first.
    const routeIds = Object.keys(resources).filter(
      (id) => resources[id]!.Type === 'AWS::ApiGatewayV2::Route' && throttled.some(([key]) => resources[id]!.Properties.RouteKey === key),
    );
    expect(routeIds).toHaveLength(2);
    for (const id of routeIds) expect(waitsFor(logicalIdOf('AWS::ApiGatewayV2::Stage'))).toContain(id);
  });

  it('keeps each capped route’s burst within its cap, so clients meet API Gateway’s 429 rather than a throttled Lambda’s 500', () => {
    const cappedRoutes = functions.filter((f) => f.trigger.kind === 'http' && f.concurrencyCap !== undefined);

    expect(cappedRoutes.map((f) => f.id)).toEqual(['create-session']);
    const [stage] = ofType('AWS::ApiGatewayV2::Stage');
    for (const spec of cappedRoutes) {
      const key = spec.trigger.kind === 'http' ? `${spec.trigger.method} ${spec.trigger.path}` : '';
      expect(stage!.Properties.RouteSettings[key]?.ThrottlingBurstLimit, spec.id).toBeLessThanOrEqual(spec.concurrencyCap!);
    }
  });
});
