/** The stack's the stage and the stack as a whole (infra/stack/stage.ts, infra/stack.ts). */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../../infra/app';
import { functions } from '../../../functions/table';
import { DYNAMIC_REFERENCE, statefulIn, STATEFUL_DEV, STATEFUL_CACHE, STATEFUL_PROD } from '../../support/stack-fixtures';
import { stack, template, resources, ofType, functionOf, adminSecretId } from '../../support/dev-stack';
import * as prod from '../../support/prod-stack';
import { deployedNameOf } from '../../support/stack';

describe('the CDK app (dev)', () => {
  it('keeps the logical ID and physical name of every stateful resource, so no deploy replaces one', () => {
    expect(statefulIn(resources)).toEqual({ ...STATEFUL_DEV, ...STATEFUL_CACHE.single });
  });

  it('resolves a secret only where a resource needs its value: the cache’s AUTH token and the cluster’s master password', () => {
    const referencesByType: Record<string, number> = {};
    for (const resource of Object.values(resources)) {
      const count = JSON.stringify(resource).match(DYNAMIC_REFERENCE)?.length ?? 0;
      if (count) referencesByType[resource.Type] = (referencesByType[resource.Type] ?? 0) + count;
    }

    expect(referencesByType).toEqual({ 'AWS::ElastiCache::ReplicationGroup': 1, 'AWS::RDS::DBCluster': 1 });
    expect(JSON.stringify(template.toJSON()).match(DYNAMIC_REFERENCE)).toHaveLength(2);
  });

  it("generates the first admin's credentials for the default address, lets only the deploy trigger read them, and outputs where they are", () => {
    const secretId = adminSecretId();
    const readers = ofType('AWS::IAM::Policy')
      .filter((p) => JSON.stringify(p.Properties.PolicyDocument).includes(JSON.stringify({ Ref: secretId })))
      .flatMap((p) => (p.Properties.Roles as { Ref: string }[]).map((r) => r.Ref));
    const roleOf = (id: string) => functionOf(id).Properties.Role['Fn::GetAtt'][0] as string;

    expect(resources[secretId]!.Properties.GenerateSecretString).toMatchObject({
      SecretStringTemplate: JSON.stringify({ email: 'admin@inbound.test.example' }),
      GenerateStringKey: 'password',
      PasswordLength: 32,
    });
    expect(readers).toEqual([roleOf('migrate-database')]);
    expect(template.toJSON().Outputs.AdminSecretArn).toMatchObject({ Value: { Ref: secretId } });
  });

  it('grants no wildcard actions', () => {
    const actions = ofType('AWS::IAM::Policy').flatMap((p) =>
      (p.Properties.PolicyDocument.Statement as { Action: string | string[] }[]).flatMap((s) => [s.Action].flat()),
    );
    expect(actions.filter((a) => a === '*' || a.endsWith(':*'))).toEqual([]);
  });

  describe('in the dev stage, the default', () => {
    it('says so in its tag and description', () => {
      expect(stack.tags.tagValues()).toMatchObject({ stage: 'dev' });
      expect(template.toJSON().Description).toContain('(dev)');
    });

    it('keeps nothing when CloudFormation deletes a resource, so a failed first deploy rolls back to nothing', () => {
      const kept = Object.entries(resources).filter(([, r]) => (r.DeletionPolicy ?? 'Delete') !== 'Delete' || (r.UpdateReplacePolicy ?? 'Delete') !== 'Delete');
      expect(kept.map(([id, r]) => `${id} ${r.DeletionPolicy}/${r.UpdateReplacePolicy}`)).toEqual([]);
      // CloudFormation's own default is Delete but for RDS (Snapshot); what holds data says Delete itself.
      const stateful = [
        'AWS::Logs::LogGroup',
        'AWS::S3::Bucket',
        'AWS::SecretsManager::Secret',
        'AWS::RDS::DBCluster',
        'AWS::RDS::DBInstance',
        'AWS::ElastiCache::ReplicationGroup',
      ];
      for (const type of stateful) {
        expect(
          ofType(type).map((r) => r.DeletionPolicy),
          type,
        ).toEqual(ofType(type).map(() => 'Delete'));
      }
    });

    it('deletes the VPC flow log’s group, which CDK would otherwise make and retain', () => {
      const [flowLog] = ofType('AWS::EC2::FlowLog');
      expect(resources[flowLog!.Properties.LogGroupName.Ref]).toMatchObject({ Type: 'AWS::Logs::LogGroup', DeletionPolicy: 'Delete' });
    });

    it('lets CloudFormation delete the Aurora cluster', () => {
      template.hasResourceProperties('AWS::RDS::DBCluster', { DeletionProtection: false });
    });

    it('empties each bucket before CloudFormation deletes it', () => {
      const emptied = ofType('Custom::S3AutoDeleteObjects').map((r) => r.Properties.BucketName.Ref);
      expect(emptied.sort()).toEqual(
        Object.keys(resources)
          .filter((id) => resources[id]!.Type === 'AWS::S3::Bucket')
          .sort(),
      );
    });
  });
});

describe('the CDK app in the prod stage', () => {
  it('says so in its tag and description', () => {
    expect(prod.stack.tags.tagValues()).toMatchObject({ stage: 'prod' });
    expect(Template.fromStack(prod.stack).toJSON().Description).toContain('(prod)');
  });

  it('protects the Aurora cluster from deletion, and snapshots it and the cache when deleted or replaced', () => {
    const [cluster] = prod.ofType('AWS::RDS::DBCluster');
    expect(cluster!.Properties.DeletionProtection).toBe(true);
    for (const store of [cluster!, ...prod.ofType('AWS::ElastiCache::ReplicationGroup')]) {
      expect([store.Type, store.DeletionPolicy, store.UpdateReplacePolicy]).toEqual([store.Type, 'Snapshot', 'Snapshot']);
    }
  });

  it('leaves out the functions that prepare load tests, so their routes do not exist', () => {
    const loadTests = functions.filter((f) => f.loadTest);
    const routes = prod.ofType('AWS::ApiGatewayV2::Route').map((r) => r.Properties.RouteKey);

    expect(loadTests.map((f) => f.id)).toEqual(['create-load-test-buyers']);
    expect(prod.ofType('AWS::Lambda::Function').map((r) => r.Properties.FunctionName)).toEqual(
      expect.arrayContaining(prod.deployed.map((f) => deployedNameOf('surge-prod', f.id))),
    );
    for (const spec of loadTests) {
      expect(prod.functionOf(spec.id), spec.id).toBeUndefined();
      if (spec.trigger.kind === 'http') expect(routes).not.toContain(`${spec.trigger.method} ${spec.trigger.path}`);
    }
    expect(routes).toContain('POST /admin/audit/items/{itemId}');
  });

  it('keeps the logical ID and physical name of every stateful resource, so no deploy replaces one', () => {
    expect(statefulIn(prod.resources)).toEqual(STATEFUL_PROD);
  });

  it('is in us-east-1, where CloudFront’s web ACLs are', () => {
    expect(prod.stack.region).toBe('us-east-1');
  });

  it('retains every bucket, log group and secret as it is, and empties no bucket', () => {
    for (const type of ['AWS::S3::Bucket', 'AWS::Logs::LogGroup', 'AWS::SecretsManager::Secret']) {
      expect(prod.ofType(type).length, type).toBeGreaterThan(0);
      expect(
        prod.ofType(type).map((r) => [r.DeletionPolicy, r.UpdateReplacePolicy]),
        type,
      ).toEqual(prod.ofType(type).map(() => ['Retain', 'Retain']));
    }
    expect(prod.ofType('Custom::S3AutoDeleteObjects')).toEqual([]);
  });
});

describe('the stage', () => {
  it('is dev or prod, and nothing else synthesizes', () => {
    expect(() => buildApp(new App({ context: { stage: 'staging' } }))).toThrow('Unknown stage "staging": pass -c stage=dev|prod');
  });

  it('refuses a load-test allowance in prod', () => {
    expect(() =>
      buildApp(new App({ context: { stage: 'prod', inboundDomain: 'inbound.test.example', loadTestSources: '10.0.0.0/8', 'aws:cdk:bundling-stacks': [] } })),
    ).toThrow('dev only, never prod');
  });
});

describe('the context values', () => {
  it('stop the synth of CloudFront outside us-east-1, and of a flag that is neither true nor false', () => {
    const region = process.env.CDK_DEFAULT_REGION;
    process.env.CDK_DEFAULT_REGION = 'eu-west-1';
    try {
      expect(() => buildApp(new App({ context: { cloudfront: 'true' } }))).toThrow("CloudFront's web ACL can only be made in us-east-1");
    } finally {
      if (region === undefined) delete process.env.CDK_DEFAULT_REGION;
      else process.env.CDK_DEFAULT_REGION = region;
    }
    expect(() => buildApp(new App({ context: { reservedConcurrency: 'yes' } }))).toThrow('The context value reservedConcurrency must be true or false');
    expect(() => buildApp(new App({ context: { redis: 'sharded' } }))).toThrow('Unknown Redis shape "sharded": pass -c redis=single|cluster|serverless');
  });
});
