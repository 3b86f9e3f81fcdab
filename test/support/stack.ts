import { App, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { buildApp } from '../../infra/app';
import { functionNameOf } from '../../infra/stack/functions';
import { functions } from '../../functions/table';
import { useCdkJsonContext } from './cdk-context';

// Every App the stack tests make synthesizes with cdk.json's feature flags, as `cdk deploy` does.
useCdkJsonContext();

/** The name a stack of this prefix gives the table's function of this id (functionNameOf). */
export const deployedNameOf = (namePrefix: string, id: string) => functionNameOf(namePrefix, functions.find((f) => f.id === id)!);

/** A template's resource: its properties are whatever its type has. */
export type Resource = {
  Type: string;
  Properties: Record<string, any>;
  Metadata?: Record<string, string>;
  DependsOn?: string[];
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
};

/**
 * A stack's template with these context values, without bundling the functions again (their code
 * is the default synth's): checked as `npm run synth` checks it — cdk-nag runs, and app.synth
 * throws on an unacknowledged finding — unless `nag` is false, for a test of what the stack is
 * built from (names, regions) that need not pay for it.
 */
export function synthesized(
  context: Record<string, unknown>,
  { nag = true } = {},
): { stack: Stack; resources: Record<string, Resource>; idsOf(type: string): string[] } {
  const app = new App({ context: { inboundDomain: 'inbound.test.example', ...context, 'aws:cdk:bundling-stacks': [] } });
  const { stack } = buildApp(app);
  if (nag) app.synth();
  const resources: Record<string, Resource> = Template.fromStack(stack).toJSON().Resources;
  return { stack, resources, idsOf: (type) => Object.keys(resources).filter((id) => resources[id]!.Type === type) };
}
