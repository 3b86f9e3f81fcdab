/**
 * Every Lambda of Surge and what triggers it. The local twin serves from this table and the CDK
 * stack is generated from it, so a route, queue binding or SES rule is described here and nowhere else.
 */
import type { EnvNeed } from '../shared/platform/config';

/** What a function reads from its environment: each need's variables and schema are in shared/platform/config.ts (envNeeds). */
export type { EnvNeed };

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface QueueSpec {
  /** Its name after a prefix: the twin's `surge`, or a stack's (`surge-<stage>`, infra/stack/stage.ts). */
  name: string;
  deadLetterName: string;
  /** Receives before SQS moves a message to the dead-letter queue. */
  maxReceiveCount: number;
}

export const queues = {
  reservations: { name: 'reservations', deadLetterName: 'reservations-dlq', maxReceiveCount: 5 },
} as const satisfies Record<string, QueueSpec>;

export type QueueName = keyof typeof queues;

/** How long a queue of what failed (a dead-letter or failures queue) keeps a message: SQS's longest. */
export const FAILED_MESSAGES_KEPT_DAYS = 14;

/** A queue's and its DLQ's physical names under a prefix: the twin's by default, a stack's on AWS. */
export const queueNamesOf = (name: QueueName, prefix = 'surge') => ({
  queue: `${prefix}-${queues[name].name}`,
  deadLetter: `${prefix}-${queues[name].deadLetterName}`,
});

/**
 * The queue that keeps an asynchronously invoked function's events once Lambda's retries are spent
 * (its on-failure destination), under the same prefixes: each message is Lambda's invocation record
 * around the event.
 */
export const asyncFailuresQueueOf = (functionId: string, prefix = 'surge') => `${prefix}-${functionId}-failures`;

/** Lambda's retries of a failed asynchronous invocation (SES invokes with type Event), and how long an event may wait for one. */
export const asyncInvocation = { retries: 2, maxEventAgeHours: 6 } as const;

export const buckets = {
  rawMail: { name: 'surge-raw-mail' },
} as const;

/** Where SES's receipt rule stores each inbound message before it invokes the mail function. */
export const inboundMail = {
  bucket: 'rawMail',
  prefix: 'inbound/',
  /** Raw messages are kept this long, quarantined ones included, then expire (the bucket's lifecycle; the need mailRetention). */
  retentionDays: 30,
  /** The twin's SMTP listener port, unless SMTP_PORT says otherwise. */
  smtpPort: 2525,
} as const satisfies { bucket: keyof typeof buckets; prefix: string; retentionDays: number; smtpPort: number };

/** API Gateway's throttle of one route (requests per second, steady and burst), in place of the stage's default. */
export interface RouteThrottle {
  rateLimit: number;
  burstLimit: number;
  /**
   * Where the route's function has a ceiling (inFlightCeiling), the p99 of an invocation the
   * throttle is sized for: the stack holds a burst and a p99's worth of the rate within the ceiling,
   * so that, while invocations take no longer, API Gateway answers 429 before Lambda throttles.
   */
  p99BudgetMs?: number;
}

/** The stage's default route settings: every route without a throttle of its own is throttled so. */
export const DEFAULT_ROUTE_THROTTLE: RouteThrottle = { rateLimit: 5_000, burstLimit: 10_000 };

export type Trigger =
  | { kind: 'http'; method: HttpMethod; path: string; throttle?: RouteThrottle }
  | {
      kind: 'queue';
      queue: QueueName;
      batchSize: number;
      maxBatchingWindowSeconds: number;
      /** Concurrent batches, as the event source mapping's maximum concurrency. */
      maxConcurrency: number;
    }
  | { kind: 'ses' }
  | { kind: 'schedule'; rateMinutes: number }
  /** Runs once on every deployment, before the API is used (a CDK trigger). */
  | { kind: 'deploy' };

export interface FunctionSpec {
  /** kebab-case; also the entry file's name under functions/. */
  id: string;
  description: string;
  trigger: Trigger;
  memoryMb: number;
  timeoutSeconds: number;
  env: readonly EnvNeed[];
  /**
   * At most this many instances at once, so that a flood on this function cannot take the
   * concurrency the others need: its reserved concurrency on AWS (where the stack reserves, see
   * `-c reservedConcurrency`); the twin throttles at it as Lambda would, always.
   */
  concurrencyCap?: number;
  /**
   * Runs on Lambda Managed Instances rather than one invocation at a time an instance: see
   * ManagedInstances. Its memoryMb is then an execution environment's, at least 2,048.
   */
  managedInstances?: ManagedInstances;
  /**
   * Prepares load tests (signed-in buyers in bulk): deployed where load tests may run, the twin
   * and the dev stage, and left out of the prod stage, where its route does not exist (404).
   */
  loadTest?: true;
}

/**
 * A function on Lambda Managed Instances (the stack's capacity provider, infra/stack/functions.ts):
 * each execution environment takes many invocations at once on one event loop, as the twin's one
 * instance of a function does, so the reservations of concurrent requests share one
 * SendMessageBatch (shared/platform/queue/batched-sender.ts). On Lambda's default compute an
 * instance takes one invocation at a time, and each reservation was its own signed SQS call: above
 * the autocommit design's CPU per order (docs/benchmarks.md, "The deployed shape").
 */
export interface ManagedInstances {
  /** Invocations one execution environment takes at once (PerExecutionEnvironmentMaxConcurrency). */
  perEnvironmentConcurrency: number;
  /**
   * Execution environments kept running whatever the load (MinExecutionEnvironments): Managed
   * Instances scale on CPU, minutes behind a crowd, so a sale's opening is served by these.
   */
  minEnvironments: number;
}

const api = { memoryMb: 512, timeoutSeconds: 10 } as const;

/**
 * The reserving functions: one vCPU an environment (2,048 MB at 2 GB a vCPU: one Node worker
 * thread), 128 invocations at once, and Lambda's default minimum of three environments;
 * docs/deploy.md says how to size them for a sale. 128, not Node's default of 64 a vCPU: a
 * reservation waits on Redis and SQS far longer than it computes (0.25 ms of the function's CPU),
 * one thread of the twin carries 100 in flight at 2,000 a second (the orders bench), and every
 * slot short of what the CPU carries is an order Lambda throttles, which API Gateway answers 500.
 */
const reservingEnvironments: ManagedInstances = { perEnvironmentConcurrency: 128, minEnvironments: 3 };
const reserving = {
  memoryMb: 2048,
  timeoutSeconds: 10,
  managedInstances: reservingEnvironments,
} as const satisfies Partial<FunctionSpec>;

/**
 * The p99 of a reservation (the script and the hand-off) that the reserving routes' throttle is
 * sized for. An assumption about AWS, not a measurement: a Redis round trip within the zone (about
 * a millisecond) and SQS's SendMessageBatch (tens of ms at its p99). The twin's own p99, on two
 * cores shared with the load, is far above it (1–4 s in the opening bench).
 */
const RESERVATION_P99_BUDGET_MS = 64;

/**
 * The invocations a function may have in flight before Lambda throttles it: its concurrency cap,
 * or on Managed Instances its environments' slots (until Lambda scales them, minutes later).
 * Undefined where only the account's concurrency bounds it.
 */
export function inFlightCeiling(spec: FunctionSpec): number | undefined {
  if (spec.managedInstances) return spec.managedInstances.minEnvironments * spec.managedInstances.perEnvironmentConcurrency;
  return spec.concurrencyCap;
}

/**
 * API Gateway answers an invocation Lambda throttles with a 500, so a route whose function has a
 * ceiling is throttled first, with a 429: a burst of one environment's slots, and a rate that keeps
 * the requests of a burst and of the next p99 within the ceiling: (384 - 128) / 64 ms = 4,000 a
 * second for the reserving functions. A store slower than that p99 lets more pile up, and past the
 * ceiling Lambda throttles: the functions' `Throttles` on the dashboard, the waiting room the bound.
 * AWS calls route throttles best effort, targets rather than ceilings: this is no guarantee.
 */
function throttleWithin(managed: ManagedInstances, p99BudgetMs: number): RouteThrottle {
  const ceiling = managed.minEnvironments * managed.perEnvironmentConcurrency;
  const burstLimit = managed.perEnvironmentConcurrency;
  // One environment alone would leave no slot for the rate: the route would pass a burst, then nothing.
  if (burstLimit >= ceiling) throw new Error('A throttle within one environment needs at least two');
  return { rateLimit: Math.floor(((ceiling - burstLimit) * 1000) / p99BudgetMs), burstLimit, p99BudgetMs };
}
const reservingThrottle = throttleWithin(reservingEnvironments, RESERVATION_P99_BUDGET_MS);

export const functions: readonly FunctionSpec[] = [
  {
    id: 'health',
    description: 'Names what is down of Redis, MySQL and the order queue (each error, to an admin with ?detail=1)',
    trigger: { kind: 'http', method: 'GET', path: '/health' },
    ...api,
    timeoutSeconds: 5,
    env: ['redis', 'database', 'reservationQueue', 'sessions'],
  },
  {
    id: 'get-api-document',
    description: 'Returns the OpenAPI 3.1 document of this API, as built from this table and the entries (infra/openapi)',
    trigger: { kind: 'http', method: 'GET', path: '/openapi.json' },
    ...api,
    // Serves a file read once per instance: little memory, no store.
    memoryMb: 256,
    env: [],
  },
  {
    id: 'get-api-docs',
    description: 'Returns the docs page, which renders the OpenAPI document (Swagger UI, inlined: nothing from a CDN)',
    trigger: { kind: 'http', method: 'GET', path: '/docs' },
    ...api,
    memoryMb: 256,
    env: [],
  },
  {
    id: 'create-session',
    description: 'Signs a user in and sets the session cookie',
    // Sign-in hashes with scrypt (CPU-bound): a credential-stuffing flood is held to its own share.
    // Its throttle stays within its cap (API Gateway answers an invocation Lambda throttles with a
    // 500): 5 at once and 100 a second, 15 in flight at a p99 of 150 ms (scrypt at N 16,384 on 512 MB's
    // share of a vCPU, an assumption: the twin's cores are not Lambda's).
    trigger: { kind: 'http', method: 'POST', path: '/sessions', throttle: { rateLimit: 100, burstLimit: 5, p99BudgetMs: 150 } },
    ...api,
    env: ['redis', 'database', 'sessions', 'limits'],
    concurrencyCap: 20,
  },
  {
    id: 'create-user',
    description: 'Signs a new user up and in (session cookie as for sign-in)',
    trigger: { kind: 'http', method: 'POST', path: '/users', throttle: { rateLimit: 20, burstLimit: 40 } },
    ...api,
    env: ['redis', 'database', 'sessions', 'limits'],
  },
  {
    id: 'delete-current-session',
    description: 'Signs out of the session that made the request',
    trigger: { kind: 'http', method: 'DELETE', path: '/sessions/current' },
    ...api,
    env: ['redis', 'sessions'],
  },
  {
    id: 'delete-all-sessions',
    description: "Signs out of every one of the user's sessions",
    trigger: { kind: 'http', method: 'DELETE', path: '/sessions' },
    ...api,
    env: ['redis', 'sessions'],
  },
  {
    id: 'get-me',
    description: 'Returns the signed-in user',
    trigger: { kind: 'http', method: 'GET', path: '/me' },
    ...api,
    env: ['redis', 'sessions'],
  },
  {
    id: 'put-item-stock',
    description: 'Opens a flash sale: initial stock in MySQL, live counter in Redis (admin)',
    trigger: { kind: 'http', method: 'PUT', path: '/items/{itemId}/stock' },
    ...api,
    env: ['redis', 'database', 'sessions'],
  },
  {
    id: 'get-item',
    description: 'Returns an item with its live remaining stock',
    trigger: { kind: 'http', method: 'GET', path: '/items/{itemId}' },
    ...api,
    env: ['redis', 'database', 'sessions'],
  },
  {
    id: 'create-order',
    description: 'Reserves stock in one Lua call and hands the order to the queue',
    trigger: { kind: 'http', method: 'POST', path: '/items/{itemId}/orders', throttle: reservingThrottle },
    ...reserving,
    env: ['redis', 'database', 'reservationQueue', 'sessions', 'limits'],
  },
  {
    id: 'put-waiting-room',
    description: "Sets an item's waiting room, or pauses, resumes or re-rates it; from then on its orders need a pass (admin)",
    trigger: { kind: 'http', method: 'PUT', path: '/items/{itemId}/waiting-room' },
    ...api,
    env: ['redis', 'database', 'sessions', 'orderRoute'],
  },
  {
    id: 'delete-waiting-room',
    description: "Removes an item's waiting room, its queue and its passes; from then on its orders need no pass (admin)",
    trigger: { kind: 'http', method: 'DELETE', path: '/items/{itemId}/waiting-room' },
    ...api,
    env: ['redis', 'database', 'sessions'],
  },
  {
    id: 'join-queue',
    description: "Puts the signed-in buyer in an item's waiting room, once per account, at a shuffled rank before it opens",
    trigger: { kind: 'http', method: 'POST', path: '/items/{itemId}/queue' },
    ...api,
    env: ['redis', 'sessions', 'limits'],
  },
  {
    id: 'get-queue-status',
    description: "Returns the buyer's place in an item's waiting room: position, wait, odds, sold out, when to ask again (a read)",
    trigger: { kind: 'http', method: 'GET', path: '/items/{itemId}/queue/me' },
    ...api,
    env: ['redis', 'sessions'],
  },
  {
    id: 'claim-queue-pass',
    description: "Issues the admitted buyer's pass to order the item, once",
    trigger: { kind: 'http', method: 'POST', path: '/items/{itemId}/queue/pass' },
    ...api,
    env: ['redis', 'sessions'],
  },
  {
    id: 'get-waiting-page',
    description:
      "Returns an item's waiting page, which polls the buyer's place (self-contained HTML: nothing fetched from elsewhere); a page saying so where the item has no room",
    trigger: { kind: 'http', method: 'GET', path: '/wait/{itemId}' },
    ...api,
    memoryMb: 256,
    env: ['redis'],
  },
  {
    id: 'get-order',
    description: "Returns the status of one of the caller's orders",
    trigger: { kind: 'http', method: 'GET', path: '/orders/{orderId}' },
    ...api,
    env: ['redis', 'database', 'sessions'],
  },
  {
    id: 'put-deal',
    description: 'Creates or updates a time deal: MySQL row and Redis state (admin)',
    trigger: { kind: 'http', method: 'PUT', path: '/deals/{dealId}' },
    ...api,
    env: ['redis', 'database', 'sessions'],
  },
  {
    id: 'get-deal',
    description: 'Returns a deal with the coupons remaining',
    trigger: { kind: 'http', method: 'GET', path: '/deals/{dealId}' },
    ...api,
    env: ['redis', 'database', 'sessions'],
  },
  {
    id: 'create-coupon',
    description: 'Issues one coupon of a deal to the caller in one Lua call, then hands it to the queue',
    trigger: { kind: 'http', method: 'POST', path: '/deals/{dealId}/coupons', throttle: reservingThrottle },
    ...reserving,
    env: ['redis', 'database', 'reservationQueue', 'sessions', 'limits'],
  },
  {
    id: 'list-my-coupons',
    description: "Lists the caller's coupons, pending ones included",
    trigger: { kind: 'http', method: 'GET', path: '/me/coupons' },
    ...api,
    env: ['redis', 'database', 'sessions'],
  },
  {
    id: 'create-load-test-buyers',
    description: 'Creates buyers in bulk, each signed in, for a load test of a sale or deal (admin; not in prod)',
    trigger: { kind: 'http', method: 'POST', path: '/admin/load-tests/buyers' },
    ...api,
    env: ['redis', 'database', 'sessions'],
    loadTest: true,
  },
  {
    id: 'audit-sale',
    description: "Holds a sale's stock, rows and buyers against the order ids a load test was accepted for (admin)",
    trigger: { kind: 'http', method: 'POST', path: '/admin/audit/items/{itemId}' },
    ...api,
    env: ['redis', 'database', 'sessions'],
  },
  {
    id: 'audit-deal',
    description: "Holds a deal's coupons, rows and holders against the coupon ids a load test was issued (admin)",
    trigger: { kind: 'http', method: 'POST', path: '/admin/audit/deals/{dealId}' },
    ...api,
    env: ['redis', 'database', 'sessions'],
  },
  {
    id: 'write-reservations',
    description: 'Stores queued orders (under the stock guard) and coupons in MySQL, exactly once',
    // Up to 100 messages or 1 s, whichever comes first: every batch is one transaction of six statements
    // whatever its size, so a sale's orders are stored in a tenth of the transactions and invocations
    // of 10-message batches (the orders' CPU per order fell by a third on the twin), for at most a second
    // more before an order is stored when traffic is thin. Its client was answered (202, pending) already.
    trigger: { kind: 'queue', queue: 'reservations', batchSize: 100, maxBatchingWindowSeconds: 1, maxConcurrency: 4 },
    memoryMb: 512,
    timeoutSeconds: 30,
    env: ['redis', 'database', 'reservationFailures'],
    // Its mapping's concurrency, and no more: each batch is one transaction on one of the proxy's connections.
    concurrencyCap: 4,
  },
  {
    id: 'list-programs',
    description: 'Returns a page of the catalog through the lock-guarded cache',
    trigger: { kind: 'http', method: 'GET', path: '/programs' },
    ...api,
    env: ['redis', 'database'],
  },
  {
    id: 'create-program',
    description: 'Adds a program to the catalog and bumps its cache version (admin)',
    trigger: { kind: 'http', method: 'POST', path: '/programs' },
    ...api,
    env: ['redis', 'database', 'sessions'],
  },
  {
    id: 'update-program',
    description: 'Changes a program and bumps the catalog cache version (admin)',
    trigger: { kind: 'http', method: 'PUT', path: '/programs/{id}' },
    ...api,
    env: ['redis', 'database', 'sessions'],
  },
  {
    id: 'receive-mail',
    description: 'Parses inbound newsletter mail from S3, finds or creates its newsletter and files it for its readers',
    trigger: { kind: 'ses' },
    memoryMb: 1024,
    timeoutSeconds: 30,
    env: ['redis', 'database', 'inboundDomain', 'rawMail'],
    // A mail flood waits in Lambda's async queue (SES invokes asynchronously) instead of taking the API's share.
    concurrencyCap: 10,
  },
  {
    id: 'get-inbox-address',
    description: "Returns the caller's inbound address, creating it on first use",
    trigger: { kind: 'http', method: 'GET', path: '/me/inbox-address' },
    ...api,
    env: ['redis', 'database', 'sessions', 'inboundDomain'],
  },
  {
    id: 'rotate-inbox-address',
    description: "Replaces the caller's inbound address; mail to the old one is dropped",
    trigger: { kind: 'http', method: 'POST', path: '/me/inbox-address' },
    ...api,
    env: ['redis', 'database', 'sessions', 'inboundDomain'],
  },
  {
    id: 'list-my-newsletters',
    description: "Pages through the caller's newsletters with unread counts",
    trigger: { kind: 'http', method: 'GET', path: '/me/newsletters' },
    ...api,
    env: ['redis', 'database', 'sessions'],
  },
  {
    id: 'list-my-inbox',
    description: "Pages through the caller's issues, optionally of one newsletter",
    trigger: { kind: 'http', method: 'GET', path: '/me/inbox' },
    ...api,
    env: ['redis', 'database', 'sessions'],
  },
  {
    id: 'get-inbox-issue',
    description: "Returns one of the caller's issues in full and marks it read",
    trigger: { kind: 'http', method: 'GET', path: '/me/inbox/{issueId}' },
    ...api,
    env: ['redis', 'database', 'sessions'],
  },
  {
    id: 'mute-newsletter',
    description: 'Stops filing a newsletter for the caller',
    trigger: { kind: 'http', method: 'POST', path: '/me/newsletters/{id}/mute' },
    ...api,
    env: ['redis', 'database', 'sessions'],
  },
  {
    id: 'unmute-newsletter',
    description: 'Files a muted newsletter for the caller again',
    trigger: { kind: 'http', method: 'DELETE', path: '/me/newsletters/{id}/mute' },
    ...api,
    env: ['redis', 'database', 'sessions'],
  },
  {
    id: 'get-my-feeds',
    description: "Returns the caller's feed URLs (Atom, JSON Feed) of all their newsletters and of each, creating their feed token on first use",
    trigger: { kind: 'http', method: 'GET', path: '/me/feeds' },
    ...api,
    env: ['redis', 'database', 'sessions'],
  },
  {
    id: 'rotate-feed-token',
    description: "Replaces the caller's feed token; the old feed URLs answer 404, the inbox address stays",
    trigger: { kind: 'http', method: 'POST', path: '/me/feeds' },
    ...api,
    env: ['redis', 'database', 'sessions'],
  },
  {
    id: 'get-atom-feed',
    description: "Returns a reader's newsletters (all, or one) as an Atom 1.0 feed, opened by the feed token in its path; 304 to a current copy",
    trigger: { kind: 'http', method: 'GET', path: '/feeds/{token}/atom/{feed}' },
    ...api,
    env: ['redis', 'database'],
  },
  {
    id: 'get-json-feed',
    description: "Returns a reader's newsletters (all, or one) as a JSON Feed 1.1, opened by the feed token in its path; 304 to a current copy",
    trigger: { kind: 'http', method: 'GET', path: '/feeds/{token}/json/{feed}' },
    ...api,
    env: ['redis', 'database'],
  },
  {
    id: 'get-feed-issue',
    description: "Returns one of a reader's issues as an HTML page, opened by the feed token in its path (a feed entry's link)",
    trigger: { kind: 'http', method: 'GET', path: '/feeds/{token}/issues/{issueId}' },
    ...api,
    env: ['redis', 'database'],
  },
  {
    id: 'list-my-quarantine',
    description: "Pages through the caller's quarantined mail that can still be released",
    trigger: { kind: 'http', method: 'GET', path: '/me/quarantine' },
    ...api,
    env: ['redis', 'database', 'sessions', 'mailRetention'],
  },
  {
    id: 'release-quarantined-mail',
    description: "Files one of the caller's quarantined mails from its raw message, parsed as receive-mail does",
    trigger: { kind: 'http', method: 'POST', path: '/me/quarantine/{id}/release' },
    // Parses on a thread of its own under the same limits as receive-mail, within the API's time.
    memoryMb: 1024,
    timeoutSeconds: 15,
    env: ['redis', 'database', 'sessions', 'rawMail', 'mailRetention'],
  },
  {
    id: 'migrate-database',
    description: 'Applies the SQL migrations the twin also uses, once each, then creates the first admin if absent, on every deployment',
    trigger: { kind: 'deploy' },
    memoryMb: 256,
    timeoutSeconds: 300,
    env: ['database', 'firstAdmin'],
  },
  {
    id: 'revoke-feed-tokens',
    description: 'Revokes in Redis the feed tokens rotations replaced whose own revocation failed',
    trigger: { kind: 'schedule', rateMinutes: 1 },
    memoryMb: 256,
    timeoutSeconds: 60,
    env: ['redis', 'database'],
  },
  {
    id: 'reconcile-reservations',
    description: 'Checks stock and coupon conservation; relays orders and coupons whose send was lost',
    trigger: { kind: 'schedule', rateMinutes: 5 },
    memoryMb: 512,
    timeoutSeconds: 60,
    env: ['redis', 'database', 'reservationQueue'],
  },
];

/**
 * SQS visibility timeout for a queue: six times its consumer's timeout, as AWS advises for event
 * source mappings, so a slow batch is not delivered twice while it is still being processed.
 */
export function visibilityTimeoutSeconds(queue: QueueName): number {
  const consumers = functions.filter((f) => f.trigger.kind === 'queue' && f.trigger.queue === queue);
  // Lambda's advice for an event source mapping: six times the function's timeout, plus its batching window.
  const window = Math.max(0, ...consumers.map((f) => (f.trigger.kind === 'queue' ? f.trigger.maxBatchingWindowSeconds : 0)));
  return 6 * Math.max(5, ...consumers.map((f) => f.timeoutSeconds)) + window;
}

/** The order route's rate a second, all items together: what a waiting room may admit at most (the need orderRoute). */
export function orderRouteRateLimit(): number {
  const trigger = functions.find((f) => f.id === 'create-order')!.trigger;
  if (trigger.kind !== 'http' || !trigger.throttle) throw new Error('create-order: its route has no throttle');
  return trigger.throttle.rateLimit;
}

/**
 * Every need of a function: its row's, and for a route the CloudFront check, which every route
 * makes (shared/api/api.ts) and so no row repeats.
 */
export function envNeedsOf(spec: FunctionSpec): readonly EnvNeed[] {
  return spec.trigger.kind === 'http' ? [...spec.env, 'cloudFront'] : spec.env;
}

export function entryFile(spec: FunctionSpec): string {
  return `functions/${spec.id}.ts`;
}
