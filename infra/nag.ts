import { functions } from '../functions/table';
import { Validations } from 'aws-cdk-lib';
import type { SurgeStack } from './stack';

/** Each acknowledged cdk-nag finding, with where it applies and why. Everything else must pass. */
export function acknowledgeFindings(stack: SurgeStack): void {
  const at = (path: string) => stack.node.findChild(path);
  const acknowledge = (scope: import('constructs').IConstruct, id: string, reason: string) => Validations.of(scope).acknowledge({ id, reason });

  for (const [id, fn] of stack.functions) {
    acknowledge(
      fn,
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      'The minimal AWS policy for writing the function its own logs; maintained by AWS as log APIs change.',
    );
    // A function on Managed Instances has no network interfaces of its own: its capacity provider's instances do.
    if (!functions.find((spec) => spec.id === id)?.managedInstances)
      acknowledge(
        fn,
        'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole]',
        'The minimal AWS policy that lets a function in a VPC create and remove its network interfaces.',
      );
  }
  for (const spec of functions.filter((f) => f.env.includes('rawMail'))) {
    acknowledge(
      stack.functions.get(spec.id)!,
      'AwsSolutions-IAM5[Resource::<RawMailA1B12CE5.Arn>/inbound/*]',
      'The mail functions read (s3:GetObject only) the raw messages SES stores under the inbound prefix; their keys are SES message ids, known only at run time.',
    );
  }
  acknowledge(
    at('receive-mailFailures'),
    'AwsSolutions-SQS3',
    'This queue is itself the end of the line: the failure destination of SES receipt events the mail function could not process; it is alarmed, and nothing consumes it to fail again.',
  );
  acknowledge(at('AccessLogs'), 'AwsSolutions-S1', 'This is the access-log bucket of the raw-mail bucket; logging it into itself would loop.');
  acknowledge(
    at('Api'),
    'AwsSolutions-APIG4',
    "Authorization is the functions' own: an HttpOnly session cookie checked in Redis on every request (one round trip), with admin roles; the catalog and deal/item reads are public by design.",
  );
  acknowledge(
    at('RedisAuth'),
    'AwsSolutions-SMG4',
    "Secrets Manager has no managed rotation for an ElastiCache AUTH token, nor CloudFormation an update strategy: rotating it is an operation on the replication group (AuthTokenUpdateStrategy ROTATE, then SET), or on the serverless cache's user (both passwords, then the new one alone; see infra/redis.ts). The functions look the token up again when AUTH is refused.",
  );
  acknowledge(
    at('AdminCredentials'),
    'AwsSolutions-SMG4',
    "The first admin's initial password: the deploy trigger uses it only to create an admin that does not exist yet, and never resets an existing one, so a rotation would change nothing but the secret.",
  );
  acknowledge(
    at('Database'),
    'AwsSolutions-RDS6',
    'IAM database authentication is off at the cluster as at RDS Proxy: only the proxy may reach the cluster (its security group), and it signs in with the Secrets Manager password (rotated every 30 days), the one database user; on at the cluster alone it would be a way in no one uses.',
  );
  acknowledge(
    at('Database'),
    'AwsSolutions-RDS14',
    'Recovery is by point-in-time restore from the 7-day automated backups; Backtrack is not offered for Aurora Serverless v2 writers.',
  );
  if (stack.stage === 'dev') {
    acknowledge(
      at('Database'),
      'AwsSolutions-RDS10',
      'The dev stage keeps nothing: with deletion protection CloudFormation could neither delete the cluster nor roll back a failed first deploy. The prod stage has it on.',
    );
  }
  const capacity = stack.node.tryFindChild('ReservingCapacity');
  if (capacity) {
    acknowledge(
      capacity.node.findChild('OperatorRole'),
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/AWSLambdaManagedEC2ResourceOperator]',
      "Lambda's own policy for running Managed Instances' EC2 capacity on the account's behalf (launching and ending instances, their network interfaces): maintained by AWS as that service's needs change.",
    );
  }
  const gradual = stack.node.tryFindChild('GradualDeploys');
  if (gradual) {
    acknowledge(
      gradual.node.findChild('DeployRole'),
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited]',
      "CodeDeploy's own minimal policy for shifting a Lambda alias (lambda:UpdateAlias, GetAlias, InvokeFunction on the hooks, reading the alarms): maintained by AWS as CodeDeploy's needs change.",
    );
  }
  const cdn = stack.node.tryFindChild('Cdn');
  if (cdn) {
    acknowledge(
      at('OriginSecret'),
      'AwsSolutions-SMG4',
      "CloudFront's origin header holds this value as CloudFormation resolved it at deploy, so a scheduled rotation would lock CloudFront out until the next deploy. Rotating is a deploy: change the secret, then deploy.",
    );
    acknowledge(
      cdn,
      'AwsSolutions-CFR4',
      "The distribution uses CloudFront's default certificate (*.cloudfront.net), whose viewer TLS policy cannot be set; a custom domain with its own certificate would allow TLSv1.2_2021 as the minimum. Its origin connection is TLS 1.2 only.",
    );
    acknowledge(
      cdn,
      'AwsSolutions-CFR1',
      'Surge serves readers wherever they are; abuse is held off by the WAF rate limit per address and the per-route throttles, not by country.',
    );
  }
  for (const endpoint of ['Sqs', 'SecretsManager', 'Logs']) {
    acknowledge(
      at('Vpc').node.findChild(endpoint),
      'AwsSolutions-EC23',
      "Interface endpoint security group: HTTPS from the VPC's own CIDR only (an intrinsic reference the rule cannot evaluate).",
    );
  }
}
