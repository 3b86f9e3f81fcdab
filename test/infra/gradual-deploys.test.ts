/**
 * Gradual deploys (infra/stack/gradual.ts): in prod, every function the API or the reservation
 * queue invokes is invoked through its live alias, which a CodeDeploy deployment group shifts to a
 * new version and rolls back on the alarms that mean harm; in dev, or with -c deploy=all-at-once,
 * none of it. cdk-nag runs on each synth.
 */
import type { NestedStack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { functions } from '../../functions/table';
import { LIVE_ALIAS } from '../../infra/stack/gradual';
import { deployedNameOf, synthesized, type Resource } from '../support/stack';

type Shape = ReturnType<typeof synthesized>;
interface Nested {
  resources: Record<string, Resource & { UpdatePolicy?: Record<string, any> }>;
  outputs: Record<string, { Value: unknown }>;
}

/** What a prod stack serves: every function but the load tests' helpers. */
const prodSpecs = functions.filter((spec) => !spec.loadTest);
const shiftedSpecs = prodSpecs.filter((spec) => spec.trigger.kind === 'http' || spec.trigger.kind === 'queue');
const logicalIdOfFunction = (shape: Shape, id: string, prefix = 'surge-prod') =>
  shape.idsOf('AWS::Lambda::Function').find((logical) => shape.resources[logical]!.Properties.FunctionName === deployedNameOf(prefix, id))!;
const ofType = (shape: Shape, type: string): Resource[] => shape.idsOf(type).map((id) => shape.resources[id]!);
const nestedOfType = (nested: Nested, type: string) => Object.entries(nested.resources).filter(([, r]) => r.Type === type);
/** The logical id an intrinsic names ({Ref: id} or {Fn::GetAtt: [id, …]}), or undefined; in the nested stack, through its output, for a GetAtt of one. */
const refOf = (value: unknown): string | undefined => {
  if (value && typeof value === 'object') {
    const v = value as Record<string, unknown>;
    if (typeof v.Ref === 'string') return v.Ref;
    if (Array.isArray(v['Fn::GetAtt'])) return String(v['Fn::GetAtt'][0]);
  }
  return undefined;
};

describe('gradual deploys in prod (-c stage=prod)', () => {
  let shape: Shape;
  let nested: Nested;
  /** Each alias's logical id (in the nested stack), by the logical id of its function (in the stack). */
  let aliasOf: Map<string, string>;
  /** What the stack hands the nested stack ({Ref: parameter}) or takes from it (GetAtt Outputs.x), as the logical id in the other. */
  let acrossStacks: (value: unknown) => string | undefined;

  beforeAll(() => {
    shape = synthesized({ stage: 'prod', inboundDomain: 'mail.example.com', cloudfront: 'false' });
    const template = Template.fromStack(shape.stack.node.findChild('GradualDeploys') as NestedStack).toJSON();
    nested = { resources: template.Resources, outputs: template.Outputs ?? {} };
    const [nestedStackId] = shape.idsOf('AWS::CloudFormation::Stack');
    const parameters: Record<string, unknown> = shape.resources[nestedStackId!]!.Properties.Parameters;
    acrossStacks = (value) => {
      const getAtt = (value as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'];
      if (getAtt && getAtt[0] === nestedStackId) return refOf(nested.outputs[getAtt[1].replace(/^Outputs\./, '')]!.Value);
      const ref = refOf(value);
      return ref && ref in parameters ? refOf(parameters[ref]) : ref;
    };
    aliasOf = new Map(nestedOfType(nested, 'AWS::Lambda::Alias').map(([aliasId, alias]) => [String(acrossStacks(alias.Properties.FunctionName)), aliasId]));
  });

  it('gives every function of the API and the queue a live alias on its current version, and no other function one', () => {
    const expected = shiftedSpecs.map((spec) => logicalIdOfFunction(shape, spec.id)).sort();
    expect([...aliasOf.keys()].sort()).toEqual(expected);
    for (const aliasId of aliasOf.values()) {
      const alias = nested.resources[aliasId]!.Properties;
      expect(alias.Name).toBe(LIVE_ALIAS);
      // The version is the function's own, in the stack beside it.
      const versionParameter = String(refOf(alias.FunctionVersion));
      const [nestedStackId] = shape.idsOf('AWS::CloudFormation::Stack');
      const version = (shape.resources[nestedStackId!]!.Properties.Parameters[versionParameter] as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'];
      expect(shape.resources[version[0]]!.Type).toBe('AWS::Lambda::Version');
    }
  });

  it('routes every API route and the queue’s event source mapping to the alias, never to the bare function', () => {
    const integrations = ofType(shape, 'AWS::ApiGatewayV2::Integration');
    expect(integrations).toHaveLength(prodSpecs.filter((f) => f.trigger.kind === 'http').length);
    for (const integration of integrations) expect([...aliasOf.values()]).toContain(acrossStacks(integration.Properties.IntegrationUri));
    expect(ofType(shape, 'AWS::Lambda::EventSourceMapping')).toEqual([]);
    const mappings = nestedOfType(nested, 'AWS::Lambda::EventSourceMapping');
    expect(mappings).toHaveLength(prodSpecs.filter((f) => f.trigger.kind === 'queue').length);
    // The mapping names the alias as <function>:live, split from the alias's ARN.
    for (const [, mapping] of mappings)
      expect(JSON.stringify(mapping.Properties.FunctionName)).toMatch(new RegExp(`"Ref":"(${[...aliasOf.values()].join('|')})"\\}.*":${LIVE_ALIAS}"`));
  });

  it('shifts each alias by a canary deployment group that rolls back on its alarms, its new version’s errors first', () => {
    const groups = nestedOfType(nested, 'AWS::CodeDeploy::DeploymentGroup').map(([, group]) => group);
    expect(groups).toHaveLength(shiftedSpecs.length);
    const alarmName = (alarm: unknown) => refOf((alarm as { Name: unknown }).Name);
    for (const group of groups) {
      const { AlarmConfiguration, AutoRollbackConfiguration, DeploymentConfigName } = group.Properties;
      expect(DeploymentConfigName).toBe('CodeDeployDefault.LambdaCanary10Percent5Minutes');
      expect(AutoRollbackConfiguration).toEqual({ Enabled: true, Events: expect.arrayContaining(['DEPLOYMENT_FAILURE', 'DEPLOYMENT_STOP_ON_ALARM']) });
      expect(AlarmConfiguration.Enabled).toBe(true);
      const alarms = (AlarmConfiguration.Alarms as unknown[]).map(alarmName);
      // Its own new version's alarm is in the nested stack; the harm alarms are the stack's, handed over.
      expect(nested.resources[alarms[0]!]!.Type).toBe('AWS::CloudWatch::Alarm');
      expect(alarms[0]).toMatch(/NewVersionErrors/);
      for (const parameter of alarms.slice(1)) expect(shape.resources[String(acrossStacks({ Ref: parameter }))]!.Type).toBe('AWS::CloudWatch::Alarm');
    }
    // Each alias's update is a CodeDeploy deployment: CloudFormation hands the shift to the group.
    for (const aliasId of aliasOf.values()) expect(nested.resources[aliasId]!.UpdatePolicy).toHaveProperty('CodeDeployLambdaAliasUpdate');
  });

  it('rolls the reserving functions back on hand-off failures and guard rejections, the API on its 5xx, the writer on its DLQ', () => {
    // An alias names its deployment group in its update policy.
    const alarmsOfSpec = (id: string): string[] => {
      const alias = nested.resources[aliasOf.get(logicalIdOfFunction(shape, id))!]!;
      const group = nested.resources[String(refOf(alias.UpdatePolicy!.CodeDeployLambdaAliasUpdate.DeploymentGroupName))]!;
      return (group.Properties.AlarmConfiguration.Alarms as { Name: unknown }[]).map((a) => String(acrossStacks(a.Name)));
    };
    expect(alarmsOfSpec('create-order').join(' ')).toMatch(/Api5xxRate.*HandOffFailures.*GuardRejections/);
    expect(alarmsOfSpec('create-coupon').join(' ')).toMatch(/Api5xxRate.*HandOffFailures.*GuardRejections/);
    expect(alarmsOfSpec('get-me').join(' ')).toMatch(/Api5xxRate/);
    expect(alarmsOfSpec('get-me').join(' ')).not.toMatch(/HandOffFailures/);
    expect(alarmsOfSpec('write-reservations').join(' ')).toMatch(/reservationsDlqDepth.*GuardRejections/);
  });
});

describe('all at once (dev, or -c deploy=all-at-once)', () => {
  it('has no alias, no version and no deployment group, and invokes the functions themselves', () => {
    for (const context of [{}, { stage: 'prod', inboundDomain: 'mail.example.com', cloudfront: 'false', deploy: 'all-at-once' }]) {
      const shape = synthesized(context, { nag: false });
      expect(shape.idsOf('AWS::CloudFormation::Stack'), JSON.stringify(context)).toEqual([]);
      expect(shape.idsOf('AWS::Lambda::Version').length).toBeLessThanOrEqual(1);
      for (const mapping of ofType(shape, 'AWS::Lambda::EventSourceMapping'))
        expect(shape.resources[String(refOf(mapping.Properties.FunctionName))]!.Type).toBe('AWS::Lambda::Function');
    }
  });

  it('refuses a deploy mode it does not know', () => {
    expect(() => synthesized({ deploy: 'blue-green' }, { nag: false })).toThrow('Unknown deploy mode "blue-green": pass -c deploy=canary|linear|all-at-once');
  });
});
