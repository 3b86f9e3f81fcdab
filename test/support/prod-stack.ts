/**
 * The prod stage's template, made once per test file that imports it: the dev stage's but for what
 * it keeps and CloudFront, so the functions are not bundled again. Reservations and the alarms'
 * e-mail are asked for too, to check them without another synth; cdk-nag runs.
 */
import './stack-fixtures';
import { functions } from '../../functions/table';
import { deployedNameOf, synthesized } from './stack';

const prod = synthesized({ stage: 'prod', reservedConcurrency: 'true', alarmEmail: 'ops@example.com' });

export const { stack, resources } = prod;
export const ofType = (type: string) => Object.values(resources).filter((r) => r.Type === type);
export const logicalIdOfFunction = (id: string) =>
  Object.keys(resources).find((key) => resources[key]!.Properties?.FunctionName === deployedNameOf('surge-prod', id))!;
export const functionOf = (id: string) => ofType('AWS::Lambda::Function').find((r) => r.Properties.FunctionName === deployedNameOf('surge-prod', id))!;
/** The functions prod deploys: all but those that prepare load tests. */
export const deployed = functions.filter((f) => !f.loadTest);
