import { readFileSync } from 'node:fs';

/**
 * Gives every App this process makes the context of cdk.json (the feature flags), as the CDK CLI
 * does through CDK_CONTEXT_JSON: an App made with `new App({ context })` reads no cdk.json, and
 * would synthesize a template other than the one `cdk deploy` deploys.
 */
export function useCdkJsonContext(): void {
  const { context } = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> };
  process.env.CDK_CONTEXT_JSON = JSON.stringify(context);
}
