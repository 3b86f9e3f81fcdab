/**
 * The dev stage's template, as `npm run synth` checks it (cdk-nag runs; the functions are not
 * bundled, their code is the default synth's), made once per test file that imports it, with the
 * lookups the stack's tests share.
 */
import './stack-fixtures';
import { Template } from 'aws-cdk-lib/assertions';
import { deployedNameOf, synthesized, type Resource } from './stack';

const dev = synthesized({});

export const { stack } = dev;
export const template = Template.fromStack(stack);
export const resources: Record<string, Resource> = dev.resources;
export const ofType = (type: string) => Object.values(resources).filter((r) => r.Type === type);

/** The one resource of a type (and a condition): its logical id. */
export const logicalIdOf = (type: string, where: (r: Resource) => boolean = () => true) => {
  const ids = Object.keys(resources).filter((id) => resources[id]!.Type === type && where(resources[id]!));
  if (ids.length !== 1) throw new Error(`${ids.length} resources of ${type} match, not 1`);
  return ids[0]!;
};
export const functionIdOf = (id: string) => logicalIdOf('AWS::Lambda::Function', (r) => r.Properties.FunctionName === deployedNameOf('surge-dev', id));
export const functionOf = (id: string) => resources[functionIdOf(id)]!;
export const adminSecretId = () => logicalIdOf('AWS::SecretsManager::Secret', (r) => String(r.Properties.Description).startsWith("The first admin's"));

/** The resources a resource's Ref, Fn::GetAtt and Fn::Sub name. */
export const referencesIn = (value: unknown): string[] => {
  if (typeof value === 'string') return [...value.matchAll(/\$\{([A-Za-z0-9]+)[.}]/g)].map((m) => m[1]!).filter((id) => id in resources);
  if (Array.isArray(value)) return value.flatMap(referencesIn);
  if (value === null || typeof value !== 'object') return [];
  const { Ref: ref, 'Fn::GetAtt': getAtt } = value as { Ref?: string; 'Fn::GetAtt'?: [string, string] };
  if (typeof ref === 'string') return ref in resources ? [ref] : [];
  if (getAtt) return [getAtt[0]];
  return Object.values(value).flatMap(referencesIn);
};

/** What CloudFormation must create or update before a resource: its DependsOn and references, transitively. */
export const waitsFor = (id: string, seen = new Set<string>()): Set<string> => {
  for (const next of [...(resources[id]!.DependsOn ?? []), ...referencesIn(resources[id]!.Properties)]) {
    if (seen.has(next)) continue;
    seen.add(next);
    waitsFor(next, seen);
  }
  return seen;
};

/** Each alarm by the id its description names (its runbook heading in docs/runbook.md). */
export const alarmsById = (): Record<string, Resource> =>
  Object.fromEntries(
    ofType('AWS::CloudWatch::Alarm').map((a) => [/Runbook: docs\/runbook\.md, "Alarms", ([\w-]+)\./.exec(a.Properties.AlarmDescription)?.[1], a]),
  );
export const alarmsTopicId = () => logicalIdOf('AWS::SNS::Topic', (r) => r.Properties.DisplayName === 'Surge alarms');
