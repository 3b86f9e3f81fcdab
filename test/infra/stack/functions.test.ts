/** The stack's the functions (infra/stack/functions.ts). */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../infra/app';
import { envNeedsOf, functions, type EnvNeed } from '../../../functions/table';
import { envNeeds, environmentFor } from '../../../shared/platform/config';
import { deployedNameOf, type Resource } from '../../support/stack';
import { awsLikeDeployment, STACK_VARIABLES, DYNAMIC_REFERENCE } from '../../support/stack-fixtures';
import { template, resources, ofType, logicalIdOf, functionIdOf, functionOf, adminSecretId } from '../../support/dev-stack';
import * as prod from '../../support/prod-stack';

describe('the CDK app (dev)', () => {
  it('has one ARM64 nodejs24.x function per table row, with the table’s memory and timeout', () => {
    const lambdas = ofType('AWS::Lambda::Function').filter((f) => String(f.Properties.FunctionName ?? '').startsWith('surge-'));
    expect(lambdas.map((f) => f.Properties.FunctionName).sort()).toEqual(functions.map((f) => deployedNameOf('surge-dev', f.id)).sort());
    for (const spec of functions) {
      template.hasResourceProperties('AWS::Lambda::Function', {
        FunctionName: deployedNameOf('surge-dev', spec.id),
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        MemorySize: spec.memoryMb,
        Timeout: spec.timeoutSeconds,
        // A managed function's network is its capacity provider's (below).
        VpcConfig: spec.managedInstances ? Match.absent() : Match.objectLike({ SubnetIds: Match.anyValue() }),
      });
    }
  });

  it('runs the reserving functions on Managed Instances, in the functions’ subnets and security group, and no other function', () => {
    const [provider, ...others] = ofType('AWS::Lambda::CapacityProvider');
    const onInstances = functions.filter((f) => f.managedInstances);
    const isolated = ofType('AWS::EC2::Subnet').length;

    expect(others).toEqual([]);
    expect(onInstances.map((f) => f.id).sort()).toEqual(['create-coupon', 'create-order']);
    // A name of its own: an existing function cannot move onto a capacity provider, and a named one is replaced only under a new name
    expect(functionOf('create-order').Properties.FunctionName).toBe('surge-dev-create-order-managed');
    // c7g alone: 2 GiB a vCPU, and the price the cost model takes
    expect(provider!.Properties.InstanceRequirements.AllowedInstanceTypes).toEqual(['c7g.large', 'c7g.xlarge', 'c7g.2xlarge', 'c7g.4xlarge']);
    // With no NAT, the instances reach CloudWatch Logs through an endpoint of the VPC's own
    expect(ofType('AWS::EC2::VPCEndpoint').map((e) => JSON.stringify(e.Properties.ServiceName))).toEqual(
      expect.arrayContaining([expect.stringContaining('.logs')]),
    );
    expect(provider!.Properties.VpcConfig.SubnetIds).toHaveLength(isolated);
    expect(provider!.Properties.VpcConfig.SecurityGroupIds).toEqual([
      { 'Fn::GetAtt': [logicalIdOf('AWS::EC2::SecurityGroup', (r) => r.Properties.GroupDescription === 'Surge functions'), 'GroupId'] },
    ]);
    expect(provider!.Properties.InstanceRequirements.Architectures).toEqual(['arm64']);
    for (const spec of functions) {
      const config = functionOf(spec.id).Properties.CapacityProviderConfig;
      if (!spec.managedInstances) {
        expect(config, spec.id).toBeUndefined();
        continue;
      }
      // Lambda's least: 2 GB and one vCPU an environment, the vCPU a Node worker thread whose event loop takes the concurrent invocations.
      expect(spec.memoryMb, spec.id).toBeGreaterThanOrEqual(2048);
      expect(config.LambdaManagedInstancesCapacityProviderConfig, spec.id).toEqual({
        CapacityProviderArn: { 'Fn::GetAtt': [logicalIdOf('AWS::Lambda::CapacityProvider'), 'Arn'] },
        PerExecutionEnvironmentMaxConcurrency: spec.managedInstances.perEnvironmentConcurrency,
        ExecutionEnvironmentMemoryGiBPerVCpu: 2,
      });
      // dev invokes the functions themselves (no alias): Lambda's $LATEST.PUBLISHED, which keeps the environments
      expect(functionOf(spec.id).Properties.FunctionScalingConfig, spec.id).toEqual({ MinExecutionEnvironments: spec.managedInstances.minEnvironments });
      expect(functionOf(spec.id).Properties.PublishToLatestPublished, spec.id).toBe(true);
    }
  });

  it('keeps every secret out of the functions’ configuration', () => {
    for (const spec of functions) {
      const variables = functionOf(spec.id).Properties.Environment.Variables as Record<string, unknown>;
      for (const [name, value] of Object.entries(variables)) {
        // A secret's value reaches a template only as a dynamic reference, bare or inside an Fn::Join.
        expect(JSON.stringify(value), `${spec.id} ${name}`).not.toMatch(DYNAMIC_REFERENCE);
      }
      // No user or password in a URL's authority.
      for (const url of ['REDIS_URL', 'DATABASE_URL']) expect(JSON.stringify(variables[url] ?? ''), `${spec.id} ${url}`).not.toContain('@');
    }
  });

  it('sets each function’s environment from the shared map of its needs, and nothing else', () => {
    for (const spec of functions) {
      const names = Object.keys(functionOf(spec.id).Properties.Environment.Variables);

      expect(names.sort(), spec.id).toEqual([...STACK_VARIABLES, ...Object.keys(environmentFor(envNeedsOf(spec), awsLikeDeployment))].sort());
      for (const name of names.filter((n) => !STACK_VARIABLES.includes(n))) {
        expect(
          envNeedsOf(spec).some((need) => name in envNeeds[need].schema.shape),
          `${spec.id} ${name} is read by one of its needs`,
        ).toBe(true);
      }
    }
  });

  it('lets each function read exactly the secrets its needs name, and names them in its environment', () => {
    const secretOf: Partial<Record<EnvNeed, { variable: string; ref: { Ref: string } }>> = {
      redis: {
        variable: 'REDIS_AUTH_SECRET_ID',
        ref: { Ref: logicalIdOf('AWS::SecretsManager::Secret', (r) => r.Properties.Description === 'ElastiCache AUTH token') },
      },
      database: { variable: 'DATABASE_SECRET_ID', ref: { Ref: logicalIdOf('AWS::SecretsManager::SecretTargetAttachment') } },
      firstAdmin: { variable: 'FIRST_ADMIN_SECRET_ID', ref: { Ref: adminSecretId() } },
    };
    for (const spec of functions) {
      const fn = functionOf(spec.id);
      const role = fn.Properties.Role['Fn::GetAtt'][0] as string;
      const readable = ofType('AWS::IAM::Policy')
        .filter((p) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === role))
        .flatMap((p) => p.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[])
        .filter((s) => [s.Action].flat().some((a) => a.startsWith('secretsmanager:')))
        // One statement may name several secrets (the minimizePolicies flag merges those of the same actions).
        .flatMap((s) => [s.Resource].flat().map((secret) => ({ actions: [s.Action].flat(), secret })));
      const expected = envNeedsOf(spec).flatMap((need) => secretOf[need] ?? []);

      expect(readable, spec.id).toHaveLength(expected.length);
      expect(readable, spec.id).toEqual(
        expect.arrayContaining(expected.map((s) => ({ actions: expect.arrayContaining(['secretsmanager:GetSecretValue']), secret: s.ref }))),
      );
      for (const { variable, ref } of expected) expect(fn.Properties.Environment.Variables[variable], `${spec.id} ${variable}`).toEqual(ref);
    }
  });

  it('runs reconciliation every 5 minutes and migrations on every deploy', () => {
    template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(5 minutes)' });
    expect(ofType('Custom::Trigger')).toHaveLength(1);
  });

  it('caps sign-in, the mail function and the writer (at least its mapping’s concurrency), but reserves nothing unless asked', () => {
    const capped = Object.fromEntries(functions.flatMap((f) => (f.concurrencyCap ? [[f.id, f.concurrencyCap]] : [])));
    const writer = functions.find((f) => f.id === 'write-reservations')!;
    const [mapping] = ofType('AWS::Lambda::EventSourceMapping');

    expect(Object.keys(capped).sort()).toEqual(['create-session', 'receive-mail', 'write-reservations']);
    expect(writer.concurrencyCap).toBeGreaterThanOrEqual(mapping!.Properties.ScalingConfig.MaximumConcurrency);
    expect(ofType('AWS::Lambda::Function').filter((f) => 'ReservedConcurrentExecutions' in f.Properties)).toEqual([]);
  });
});

describe('the CDK app in the prod stage', () => {
  it('keeps the managed functions’ environments on the versions a canary moves their alias to, and nowhere else', () => {
    for (const spec of prod.deployed.filter((f) => f.managedInstances)) {
      const fnId = prod.logicalIdOfFunction(spec.id);
      const versions = prod.ofType('AWS::Lambda::Version').filter((v) => v.Properties.FunctionName.Ref === fnId);

      expect(versions, spec.id).toHaveLength(1);
      expect(versions[0]!.Properties.FunctionScalingConfig, spec.id).toEqual({ MinExecutionEnvironments: spec.managedInstances!.minEnvironments });
      // Nothing invokes $LATEST.PUBLISHED behind an alias: unpublished, it holds no environments
      expect(prod.functionOf(spec.id).Properties.PublishToLatestPublished, spec.id).toBe(false);
      expect(prod.functionOf(spec.id).Properties.FunctionScalingConfig, spec.id).toBeUndefined();
    }
  });

  it('reserves each capped function’s concurrency when asked (-c reservedConcurrency=true)', () => {
    for (const spec of prod.deployed) {
      expect(prod.functionOf(spec.id).Properties.ReservedConcurrentExecutions, spec.id).toBe(spec.concurrencyCap);
    }
  });
});

describe('the functions’ bundles, as cdk deploy ships them', () => {
  let bundled: Record<string, Resource>;
  let assemblyDir: string;

  beforeAll(() => {
    const app = new App({ context: { inboundDomain: 'inbound.test.example', 'aws:cdk:enable-asset-metadata': true } });
    buildApp(app);
    // Throws if any cdk-nag AwsSolutions finding is left unacknowledged.
    assemblyDir = app.synth().directory;
    bundled = Template.fromStack(app.node.findChild('Surge-dev') as never).toJSON().Resources;
  });

  const assetOf = (id: string) => {
    const fn = Object.values(bundled).find((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.FunctionName === deployedNameOf('surge-dev', id))!;
    return join(assemblyDir, fn.Metadata!['aws:asset:path']!);
  };

  it("ships the mail function's parser thread beside its bundle", () => {
    expect(existsSync(join(assetOf('receive-mail'), 'index.mjs'))).toBe(true);
    expect(existsSync(join(assetOf('receive-mail'), 'parse-worker.mjs'))).toBe(true);
  });

  it('ships the MySQL driver beside the bundle of every function that asks MySQL, and in no bundle', () => {
    const asksMySql = functions.filter((spec) => envNeedsOf(spec).includes('database')).map((spec) => spec.id);
    const shipped = (id: string) => ({
      beside: existsSync(join(assetOf(id), 'mysql-driver.mjs')),
      inBundle: readFileSync(join(assetOf(id), 'index.mjs'), 'utf8').includes('mysql_native_password'),
    });

    expect(asksMySql).toContain('health');
    for (const id of asksMySql) expect(shipped(id), id).toEqual({ beside: true, inBundle: false });
    expect(shipped('get-me')).toEqual({ beside: false, inBundle: false });
    expect(readFileSync(join(assetOf('health'), 'mysql-driver.mjs'), 'utf8')).toContain('mysql_native_password');
  });

  it('ships every migration in the migrate function’s bundle, so a new one makes the new version the trigger runs', () => {
    const migrations = readdirSync(join(import.meta.dirname, '../../../shared/platform/db/migrations')).filter((f) => f.endsWith('.sql'));
    const version = resources[resources[logicalIdOf('Custom::Trigger')]!.Properties.HandlerArn.Ref]!;

    expect(readdirSync(join(assetOf('migrate-database'), 'migrations')).sort()).toEqual(migrations.sort());
    expect(version.Type).toBe('AWS::Lambda::Version');
    expect(version.Properties.FunctionName).toEqual({ Ref: functionIdOf('migrate-database') });
  });

  it('bundles the AWS SDK into the functions rather than importing the runtime’s', () => {
    const bundle = readFileSync(join(assetOf('create-order'), 'index.mjs'), 'utf8');

    expect(bundle).toContain('SendMessageBatch');
    expect(bundle).not.toMatch(/from\s*["']@aws-sdk\//);
  });
});
