// Artillery sends telemetry through posthog-node even when ARTILLERY_DISABLE_TELEMETRY is set, and
// offline each send waits for a timeout. Preloaded, this makes posthog-node a client that sends nothing.
const Module = require('node:module');

class SilentPostHog {
  capture() {}
  async shutdownAsync() {}
}

const load = Module._load;
Module._load = function (request, ...rest) {
  if (request === 'posthog-node') return { PostHog: SilentPostHog };
  return load.call(this, request, ...rest);
};
