/** Functions served beside the table's by whoever starts the twin (the benches' baselines): never deployed, always run from their sources in this process. */
import type { FunctionSpec } from '../../functions/table';
import { capped } from './lambda/concurrency';
import { TWIN_INBOUND_DOMAIN } from './deployment';
import type { HttpRoute } from './events/http-routes';
import { LocalLambda, type Handler } from './lambda/lambda';
import { functionArnOf } from './events/ses-event';
import type { MailRoute } from './events/smtp';

/** A function the twin serves beside the table's: an HTTP route, or mail for a domain of its own. */
export interface ExtraFunction extends FunctionSpec {
  load(): Promise<Handler>;
  /** For an SES trigger: the domain its mail goes to, given the twin's inbound domain. */
  mailDomain?(inboundDomain: string): string;
}

/**
 * Names the module the twin's process imports its extra functions from (its export
 * `extraFunctions`); set by whoever starts `npm start`'s entry, e.g. the benches.
 */
export const EXTRA_FUNCTIONS_ENV = 'SURGE_EXTRA_FUNCTIONS';

/**
 * The extra functions' routes, capped as the table's are (a baseline sized like a table function
 * gets its cap too, or it would be measured with more concurrency than the function it stands
 * beside); only HTTP and SES triggers are served.
 */
export function extraFunctionRoutes(extraFunctions: ExtraFunction[]): { http: HttpRoute[]; mail: MailRoute[] } {
  const routes = { http: [] as HttpRoute[], mail: [] as MailRoute[] };
  for (const spec of extraFunctions) {
    const lambda = new LocalLambda(spec, () => spec.load());
    if (spec.trigger.kind === 'http') {
      routes.http.push({ method: spec.trigger.method, path: spec.trigger.path, invoke: capped(spec, (event) => lambda.invoke(event), 'refuse') });
    } else if (spec.trigger.kind === 'ses') {
      if (!spec.mailDomain) throw new Error(`extra function ${spec.id}: an SES trigger needs a mailDomain`);
      routes.mail.push({
        domain: spec.mailDomain(TWIN_INBOUND_DOMAIN),
        functionArn: functionArnOf(spec.id),
        invoke: capped(spec, (event) => lambda.invoke(event), 'wait'),
      });
    } else {
      throw new Error(`extra function ${spec.id}: only HTTP and SES triggers are served`);
    }
  }
  return routes;
}
