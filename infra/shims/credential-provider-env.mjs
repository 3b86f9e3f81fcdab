// Bundled in place of @aws-sdk/credential-provider-node (its chain of ini files, SSO, web identity,
// process, container and instance metadata: about 90 KB and their start-up work). On Lambda the
// execution role's credentials are always in the environment, which is the chain's first link
// anyway; the twin sets them there too. Code run unbundled (tests, the twin) keeps the full chain.
export { fromEnv as defaultProvider } from '@aws-sdk/credential-provider-env';
