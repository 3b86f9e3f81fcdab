/**
 * The CDK app: the whole of Surge on AWS, generated from functions/table.ts.
 *   npx cdk deploy -c inboundDomain=mail.example.com               (stage dev: keeps nothing)
 *   npx cdk deploy -c inboundDomain=mail.example.com -c stage=prod (keeps the data)
 *   add -c adminEmail=ops@example.com for the first admin (admin@<inboundDomain> otherwise)
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { EmailAddress } from '../shared/sessions/account-rules';
import { acknowledgeFindings } from './nag';
import { STAGES, SurgeStack, type Stage } from './stack';

/** The `stage` context value, `dev` when unset; anything else stops the synth. */
function stageOf(app: App): Stage {
  const stage: unknown = app.node.tryGetContext('stage') ?? 'dev';
  if (!STAGES.includes(stage as Stage)) throw new Error(`Unknown stage ${JSON.stringify(stage)}: pass -c stage=${STAGES.join('|')}`);
  return stage as Stage;
}

export function buildApp(app = new App()): { app: App; stack: SurgeStack } {
  const inboundDomain = String(app.node.tryGetContext('inboundDomain') ?? 'inbound.surge.example');
  // Checked here, so that a mistyped address fails the synth rather than the deploy's trigger.
  const adminEmail = EmailAddress.safeParse(String(app.node.tryGetContext('adminEmail') ?? `admin@${inboundDomain}`));
  if (!adminEmail.success) throw new Error('The context value adminEmail must be an email address');
  const stack = new SurgeStack(app, 'Surge', {
    stage: stageOf(app),
    inboundDomain,
    adminEmail: adminEmail.data,
    sourceMapStackTraces: String(app.node.tryGetContext('sourceMapStackTraces')) === 'true',
    ...(app.node.tryGetContext('loadTestSources') ? { loadTestSources: String(app.node.tryGetContext('loadTestSources')) } : {}),
    env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  acknowledgeFindings(stack);
  return { app, stack };
}

if (import.meta.url === `file://${process.argv[1]}`) buildApp().app.synth();
