import { ArnFormat, CfnOutput, Duration, RemovalPolicy, type Stack } from 'aws-cdk-lib';
import { Effect, PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFn } from 'aws-cdk-lib/aws-lambda';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { ReceiptRuleSet, TlsPolicy, type ReceiptRule } from 'aws-cdk-lib/aws-ses';
import * as sesActions from 'aws-cdk-lib/aws-ses-actions';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { asyncFailuresQueueOf, asyncInvocation, buckets, FAILED_MESSAGES_KEPT_DAYS, inboundMail, type FunctionSpec } from '../../functions/table';
import type { Deployment } from '../../shared/platform/config';
import type { Kept } from './stage';

/**
 * Regions where SES receives no mail: CloudFormation has no AWS::SES::ReceiptRuleSet there, so a
 * deploy would fail at the rule set (cfn-lint: E3006). The commercial regions missing the type in
 * CloudFormation's per-region resource specification as cfn-lint 1.51 ships it
 * (cfnlint/data/schemas/providers/<region>.py), with GovCloud and China; SES's "Email receiving
 * endpoints" (https://docs.aws.amazon.com/general/latest/gr/ses.html) are in the others. A region
 * AWS opens later is not here, and its first deploy tells.
 */
export const REGIONS_WITHOUT_SES_RECEIVING = [
  'ap-east-1',
  'ap-east-2',
  'ap-south-2',
  'ap-southeast-4',
  'ap-southeast-5',
  'ap-southeast-6',
  'ap-southeast-7',
  'ca-west-1',
  'cn-north-1',
  'cn-northwest-1',
  'eu-central-2',
  'eu-south-2',
  'me-central-1',
  'mx-central-1',
  'us-gov-east-1',
  'us-gov-west-1',
];

/** The receipt rule's name, fixed so that the raw-mail bucket's policy can name the rule's ARN (see below). */
const RECEIPT_RULE_NAME = 'newsletters';

export interface MailProps {
  kept: Kept;
  /** The domain SES receives newsletters for. */
  inboundDomain: string;
  /** The start of the rule set's and the failure queues' names (namePrefixOf in stage.ts). */
  namePrefix: string;
}

/**
 * SES inbound: for the domain, store the raw message first (an encrypted, private bucket, TLS only,
 * kept for the retention period, quarantine included), then invoke the mail function(s) with the
 * receipt event, which carries no body. The rule set must be made active once. Its resources are
 * the stack's own children (see stack.ts).
 */
export class Mail {
  /** The raw-mail bucket's access logs, and CloudFront's. */
  readonly accessLogs: Bucket;
  readonly rawMail: Bucket;
  /** Where the need `rawMail` of shared/platform/config.ts points. */
  readonly need: Deployment['rawMail'];
  /** Where each mail function's receipt events end up when it cannot process them. */
  readonly failures: Queue[] = [];
  private readonly rule: ReceiptRule;
  private readonly namePrefix: string;

  constructor(
    private readonly stack: Stack,
    props: MailProps,
  ) {
    const { kept } = props;
    this.namePrefix = props.namePrefix;
    this.accessLogs = new Bucket(stack, 'AccessLogs', {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_PREFERRED,
      enforceSSL: true,
      lifecycleRules: [{ expiration: Duration.days(90) }],
      removalPolicy: kept.buckets,
      autoDeleteObjects: kept.buckets === RemovalPolicy.DESTROY,
    });
    this.rawMail = new Bucket(stack, 'RawMail', {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      lifecycleRules: [{ prefix: inboundMail.prefix, expiration: Duration.days(inboundMail.retentionDays) }],
      serverAccessLogsBucket: this.accessLogs,
      serverAccessLogsPrefix: `${buckets[inboundMail.bucket].name}/`,
      removalPolicy: kept.buckets,
      // CloudFormation cannot delete a bucket with objects in it; this empties it first.
      autoDeleteObjects: kept.buckets === RemovalPolicy.DESTROY,
    });
    this.need = { bucket: this.rawMail.bucketName, prefix: inboundMail.prefix, retentionDays: inboundMail.retentionDays };

    const ruleSet = new ReceiptRuleSet(stack, 'InboundRules', { receiptRuleSetName: `${props.namePrefix}-inbound` });
    // The mail functions' actions follow the S3 action as receive() adds them.
    this.rule = ruleSet.addRule('Newsletters', {
      receiptRuleName: RECEIPT_RULE_NAME,
      recipients: [props.inboundDomain],
      scanEnabled: true,
      tlsPolicy: TlsPolicy.REQUIRE,
      actions: [new sesActions.S3({ bucket: this.rawMail, objectKeyPrefix: inboundMail.prefix })],
    });
    // The S3 action lets SES write for any receipt rule of the account (aws:SourceAccount): only
    // this rule may, not another stack's or stage's aimed at this bucket by mistake. The ARN is
    // built from the name, since a reference to the rule would be a cycle (the rule waits for this policy).
    const ruleArn = stack.formatArn({
      service: 'ses',
      resource: 'receipt-rule-set',
      resourceName: `${ruleSet.receiptRuleSetName}:receipt-rule/${RECEIPT_RULE_NAME}`,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
    this.rawMail.addToResourcePolicy(
      new PolicyStatement({
        effect: Effect.DENY,
        principals: [new ServicePrincipal('ses.amazonaws.com')],
        actions: ['s3:PutObject'],
        resources: [this.rawMail.arnForObjects('*')],
        conditions: { ArnNotEquals: { 'aws:SourceArn': ruleArn } },
      }),
    );
    new CfnOutput(stack, 'InboundDomain', { value: props.inboundDomain });
    new CfnOutput(stack, 'InboundRuleSet', {
      value: ruleSet.receiptRuleSetName,
      description: 'Activate once: aws ses set-active-receipt-rule-set --rule-set-name <this>',
    });
    new CfnOutput(stack, 'RawMailBucket', { value: this.rawMail.bucketName });
  }

  /** Lets a function read the raw messages under the inbound prefix. */
  grantRead(fn: LambdaFn): void {
    fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:GetObject'], resources: [this.rawMail.arnForObjects(`${inboundMail.prefix}*`)] }));
    // Without ListBucket S3 answers a missing key with AccessDenied instead of NoSuchKey.
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ['s3:ListBucket'],
        resources: [this.rawMail.bucketArn],
        conditions: { StringLike: { 's3:prefix': [`${inboundMail.prefix}*`] } },
      }),
    );
  }

  /** Has SES invoke a function with each receipt event, once the raw message is stored. */
  receive(spec: FunctionSpec, fn: LambdaFn): void {
    // SES invokes asynchronously: an event still failing after Lambda's two retries is kept here.
    const failed = new Queue(this.stack, `${spec.id}Failures`, {
      queueName: asyncFailuresQueueOf(spec.id, this.namePrefix),
      retentionPeriod: Duration.days(FAILED_MESSAGES_KEPT_DAYS),
      enforceSSL: true,
      encryption: QueueEncryption.SQS_MANAGED,
    });
    fn.configureAsyncInvoke({
      retryAttempts: asyncInvocation.retries,
      maxEventAge: Duration.hours(asyncInvocation.maxEventAgeHours),
      onFailure: new SqsDestination(failed),
    });
    this.failures.push(failed);
    new CfnOutput(this.stack, `${spec.id}FailuresUrl`.replace(/-/g, ''), { value: failed.queueUrl });
    this.rule.addAction(new sesActions.Lambda({ function: fn, invocationType: sesActions.LambdaInvocationType.EVENT }));
  }
}
