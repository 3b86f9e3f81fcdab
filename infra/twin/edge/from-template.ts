/**
 * Everything the twin's edge is built from, read off the prod stack's synthesized template: the
 * distribution, its web ACL, and the secret of the origin header, which the twin then makes (a
 * new value each start) in its Secrets Manager stand-in under the name the functions are given,
 * as the stack generates it and names it in every route's ORIGIN_SECRET_ID.
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { distributionOf, type EdgeDistribution } from './distribution';
import { prodTemplate, type CfnTemplate } from './template';
import { webAclOf, type WebAcl } from './waf';

/** Where synthesized templates are kept, for every twin of this checkout (the tests' among them). */
const TEMPLATES_DIR = fileURLToPath(new URL('../../../.local/edge-template/', import.meta.url));

export interface EdgePlan {
  templateFile: string;
  distribution: EdgeDistribution;
  webAcl?: WebAcl;
  /** The twin's secret that stands for the template's origin secret: its name (the functions' ORIGIN_SECRET_ID) and value. */
  originSecret: { logicalId: string; name: string; value: string };
}

/** The secret the routes' functions name in ORIGIN_SECRET_ID: one, and the one the origin header resolves. */
function originSecretOf(template: CfnTemplate, distribution: EdgeDistribution): string {
  const named = new Set(
    Object.values(template.Resources)
      .filter((resource) => resource.Type === 'AWS::Lambda::Function')
      .map((fn) => (fn.Properties.Environment?.Variables?.ORIGIN_SECRET_ID as { Ref?: string } | undefined)?.Ref)
      .filter((ref): ref is string => ref !== undefined),
  );
  const headers = distribution.originHeaders.map((header) => header.secretLogicalId);
  if (named.size !== 1 || headers.length !== 1 || !named.has(headers[0]!)) {
    throw new Error(
      `The twin's edge expects one origin header whose secret every route's ORIGIN_SECRET_ID names; the template's header resolves ${headers.join(', ') || 'none'}, the functions name ${[...named].join(', ') || 'none'}`,
    );
  }
  return headers[0]!;
}

export async function edgeFromTemplate(): Promise<EdgePlan> {
  const { file, template } = await prodTemplate(TEMPLATES_DIR);
  const distribution = distributionOf(template);
  const logicalId = originSecretOf(template, distribution);
  return {
    templateFile: file,
    distribution,
    ...(distribution.webAclLogicalId ? { webAcl: webAclOf(template, distribution.webAclLogicalId) } : {}),
    originSecret: { logicalId, name: `surge/${logicalId}`, value: randomBytes(36).toString('base64url') },
  };
}
