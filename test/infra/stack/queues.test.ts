/** The stack's the queues (infra/stack/queues.ts). */
import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { functions, queueNamesOf, queues, visibilityTimeoutSeconds, type QueueName } from '../../../functions/table';
import { template, resources, ofType } from '../../support/dev-stack';

describe('the CDK app (dev)', () => {
  it('gives each queue a DLQ, TLS only, and a visibility of six times its consumer’s timeout', () => {
    for (const name of Object.keys(queues) as QueueName[]) {
      template.hasResourceProperties('AWS::SQS::Queue', {
        QueueName: queueNamesOf(name, 'surge-dev').queue,
        VisibilityTimeout: visibilityTimeoutSeconds(name),
        RedrivePolicy: { deadLetterTargetArn: Match.anyValue(), maxReceiveCount: queues[name].maxReceiveCount },
      });
    }
    const policies = ofType('AWS::SQS::QueuePolicy');
    // Each table queue and its DLQ, and each SES function's failure queue.
    expect(policies).toHaveLength(2 * Object.keys(queues).length + functions.filter((f) => f.trigger.kind === 'ses').length);
    expect(policies.every((p) => JSON.stringify(p.Properties).includes('aws:SecureTransport'))).toBe(true);
    // Read from the template, not the table's formula: each mapping's queue against its function.
    const mappings = ofType('AWS::Lambda::EventSourceMapping');
    expect(mappings).toHaveLength(functions.filter((f) => f.trigger.kind === 'queue').length);
    for (const mapping of mappings) {
      const fn = resources[mapping.Properties.FunctionName.Ref]!;
      const queue = resources[mapping.Properties.EventSourceArn['Fn::GetAtt'][0]]!;
      expect(queue.Properties.VisibilityTimeout, queue.Properties.QueueName).toBeGreaterThanOrEqual(6 * fn.Properties.Timeout);
    }
    for (const spec of functions) {
      if (spec.trigger.kind !== 'queue') continue;
      template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        BatchSize: spec.trigger.batchSize,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        ScalingConfig: { MaximumConcurrency: Match.anyValue() },
      });
    }
  });
});
