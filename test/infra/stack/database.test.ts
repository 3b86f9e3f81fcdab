/** The stack's the database (infra/stack/database.ts). */
import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { functions } from '../../../functions/table';
import { DATABASE_LOG_EXPORTS } from '../../support/stack-fixtures';
import { stack, template, resources, ofType, logicalIdOf, functionIdOf, waitsFor } from '../../support/dev-stack';

describe('the CDK app (dev)', () => {
  it('puts RDS Proxy with TLS in front of an encrypted Aurora MySQL Serverless v2 cluster', () => {
    template.hasResourceProperties('AWS::RDS::DBProxy', { RequireTLS: true, EngineFamily: 'MYSQL' });
    template.hasResourceProperties('AWS::RDS::DBCluster', {
      Engine: 'aurora-mysql',
      StorageEncrypted: true,
      BackupRetentionPeriod: 7,
      ServerlessV2ScalingConfiguration: Match.anyValue(),
    });
    const functionEnv = JSON.stringify(ofType('AWS::Lambda::Function').map((f) => f.Properties.Environment));
    expect(functionEnv).toContain('DATABASE_TLS');
    // Source maps ship with each function but are not loaded at every cold start.
    expect(functionEnv).not.toContain('--enable-source-maps');
  });

  it('rotates the database password every 30 days, from its first scheduled window, with the generated password’s alphabet', () => {
    const [schedule, ...others] = ofType('AWS::SecretsManager::RotationSchedule');
    const [rotation] = ofType('AWS::Serverless::Application');
    const attachment = resources[logicalIdOf('AWS::SecretsManager::SecretTargetAttachment')]!;
    const generated = resources[attachment.Properties.SecretId.Ref]!;

    expect(others).toEqual([]);
    expect(schedule!.Properties).toMatchObject({
      SecretId: { Ref: logicalIdOf('AWS::SecretsManager::SecretTargetAttachment') },
      RotationRules: { ScheduleExpression: 'rate(30 days)' },
      RotateImmediatelyOnUpdate: false,
    });
    expect(rotation!.Properties.Parameters.excludeCharacters).toBe(generated.Properties.GenerateSecretString.ExcludeCharacters);
  });

  it('migrates on every deploy before any other function or the API stage can take traffic, and waits out the migration', () => {
    const migrate = functions.find((f) => f.trigger.kind === 'deploy')!;
    const triggerId = logicalIdOf('Custom::Trigger');
    const trigger = resources[triggerId]!;
    const stageId = logicalIdOf('AWS::ApiGatewayV2::Stage');
    const servingIds = functions.filter((f) => f !== migrate).map((f) => functionIdOf(f.id));
    // What starts functions besides the API: queue mappings, schedules, receipt rules, each naming its function.
    const starters = Object.keys(resources).filter((id) =>
      ['AWS::Lambda::EventSourceMapping', 'AWS::Events::Rule', 'AWS::SES::ReceiptRule'].includes(resources[id]!.Type),
    );

    expect(Number(trigger.Properties.Timeout)).toBeGreaterThan(migrate.timeoutSeconds * 1000);
    expect(trigger.Properties.ExecuteOnHandlerChange).toBe(true);
    // None of them can also come before the trigger: Template.fromStack refuses a dependency cycle.
    for (const id of [...servingIds, stageId]) expect(resources[id]!.DependsOn, id).toContain(triggerId);
    expect(starters).not.toEqual([]);
    for (const id of starters) expect(waitsFor(id).has(triggerId), id).toBe(true);
    expect([...waitsFor(triggerId)]).toEqual(expect.arrayContaining([logicalIdOf('AWS::RDS::DBCluster'), logicalIdOf('AWS::RDS::DBProxy')]));
  });

  it('exports each Aurora log to a group of the stack, named as RDS names it and made before the cluster', () => {
    const cluster = resources[logicalIdOf('AWS::RDS::DBCluster')]!;
    const groupIdOf = (name: string) => logicalIdOf('AWS::Logs::LogGroup', (r) => r.Properties.LogGroupName === name);

    expect(cluster.Properties.EnableCloudwatchLogsExports).toEqual(DATABASE_LOG_EXPORTS);
    for (const type of DATABASE_LOG_EXPORTS) {
      expect(cluster.DependsOn, type).toContain(groupIdOf(`/aws/rds/cluster/${cluster.Properties.DBClusterIdentifier}/${type}`));
    }
    expect(ofType('Custom::LogRetention')).toEqual([]);
  });

  it('gives up waiting for a proxy connection before any function using the database times out', () => {
    const [proxy] = ofType('AWS::RDS::DBProxyTargetGroup');
    const borrowTimeout = proxy!.Properties.ConnectionPoolConfigurationInfo.ConnectionBorrowTimeout;

    for (const spec of functions.filter((f) => f.env.includes('database'))) expect(borrowTimeout, spec.id).toBeLessThan(spec.timeoutSeconds);
  });
});
