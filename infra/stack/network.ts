import type { RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';

/**
 * The network: isolated subnets only, AWS services through endpoints, no NAT; and the security
 * group of the functions, the one group the database proxy and the cache let in.
 * Its resources are the stack's own children (see stack.ts).
 */
export class Network {
  readonly vpc: ec2.Vpc;
  /** The functions' security group. */
  readonly functions: ec2.SecurityGroup;

  constructor(stack: Stack, props: { logsRemovalPolicy: RemovalPolicy }) {
    this.vpc = new ec2.Vpc(stack, 'Vpc', {
      maxAzs: 2,
      natGateways: 0,
      subnetConfiguration: [{ name: 'isolated', subnetType: ec2.SubnetType.PRIVATE_ISOLATED, cidrMask: 22 }],
      // Its own group rather than the one flowLogs would create, which is always retained; kept a
      // month as every other log of the stack, not LogGroup's default of two years.
      flowLogs: {
        all: {
          trafficType: ec2.FlowLogTrafficType.REJECT,
          destination: ec2.FlowLogDestination.toCloudWatchLogs(
            new LogGroup(stack, 'VpcFlowLogs', { retention: RetentionDays.ONE_MONTH, removalPolicy: props.logsRemovalPolicy }),
          ),
        },
      },
    });
    this.vpc.addGatewayEndpoint('S3', { service: ec2.GatewayVpcEndpointAwsService.S3 });
    this.vpc.addInterfaceEndpoint('Sqs', { service: ec2.InterfaceVpcEndpointAwsService.SQS });
    this.vpc.addInterfaceEndpoint('SecretsManager', { service: ec2.InterfaceVpcEndpointAwsService.SECRETS_MANAGER });
    // Functions on Managed Instances (stack/functions.ts) run on instances in these subnets, which may send their logs
    // (and the business metrics in them, which a deploy's rollback alarms read) from there: with no NAT, this is the way.
    this.vpc.addInterfaceEndpoint('Logs', { service: ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_LOGS });
    this.functions = new ec2.SecurityGroup(stack, 'LambdaSg', { vpc: this.vpc, description: 'Surge functions' });
  }
}
