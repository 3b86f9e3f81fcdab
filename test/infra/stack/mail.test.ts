/** The stack's inbound mail (infra/stack/mail.ts). */
import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { functions, inboundMail } from '../../../functions/table';
import { template, resources, ofType } from '../../support/dev-stack';

describe('the CDK app (dev)', () => {
  it('stores inbound mail in an encrypted, private bucket, then invokes the mail function (S3 before Lambda)', () => {
    const [rule] = ofType('AWS::SES::ReceiptRule');
    const actions = rule!.Properties.Rule.Actions as Record<string, any>[];
    expect(rule!.Properties.Rule).toMatchObject({ Recipients: ['inbound.test.example'], ScanEnabled: true, Enabled: true });
    expect(actions.map((a) => Object.keys(a)[0])).toEqual(['S3Action', ...functions.filter((f) => f.trigger.kind === 'ses').map(() => 'LambdaAction')]);
    expect(actions[0]!.S3Action.ObjectKeyPrefix).toBe(inboundMail.prefix);
    expect(actions[1]!.LambdaAction).toMatchObject({ InvocationType: 'Event' });

    const bucketId = actions[0]!.S3Action.BucketName.Ref as string;
    const bucket = resources[bucketId]!.Properties;
    expect(bucket.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault.SSEAlgorithm).toBe('AES256');
    expect(bucket.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(bucket.LifecycleConfiguration.Rules).toContainEqual(
      expect.objectContaining({ ExpirationInDays: inboundMail.retentionDays, Prefix: inboundMail.prefix, Status: 'Enabled' }),
    );
    const policy = JSON.stringify(ofType('AWS::S3::BucketPolicy').find((p) => p.Properties.Bucket.Ref === bucketId)!.Properties.PolicyDocument);
    expect(policy).toContain('ses.amazonaws.com');
    expect(policy).toContain('aws:SecureTransport');
    template.hasResourceProperties('AWS::Lambda::Permission', { Principal: 'ses.amazonaws.com', Action: 'lambda:InvokeFunction' });
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      MaximumRetryAttempts: 2,
      DestinationConfig: { OnFailure: { Destination: Match.anyValue() } },
    });
  });
});
