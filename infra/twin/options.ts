import type { Verdicts } from './events/ses-event';
import type { ExtraFunction } from './extra-functions';

/** How startTwin runs the twin: main.ts sets them from npm start's flags and environment, tests and benches directly. */
export interface TwinOptions {
  port: number;
  stateDir: string;
  database: string;
  /**
   * Where queue consumers (the pollers and the functions they invoke) run: in a process of their
   * own by default, as on AWS where the event source mapping and the consumer are not the API's
   * instances; in this process for tests; or not at all.
   */
  consumers?: 'process' | 'in-process' | 'off';
  /**
   * Functions served beside the table's, by whoever starts the twin (the benches' baselines): not
   * the table's, so never deployed, and always run from their sources in this process.
   */
  extraFunctions?: ExtraFunction[];
  /**
   * Redis keeps its data across restarts (append-only file) unless this is false. Benchmarks turn
   * it off: an AOF rewrite forking mid-run halves throughput on two cores, and ElastiCache's own
   * durability is replication, not a file on the primary's path.
   */
  durableRedis?: boolean;
  /** Redis as a cluster of three masters (ElastiCache cluster mode), the functions run with REDIS_CLUSTER=true. */
  redisCluster?: boolean;
  /** The SMTP listener's port; 0 picks a free one. */
  smtpPort?: number;
  /** The receipt verdicts the twin's SES stand-in reports; all PASS by default. */
  verdicts?: Verdicts;
  /**
   * Serve the functions as the bundles `cdk deploy` uploads, each in worker threads with exactly
   * its row's environment; migrations then run as the deploy trigger runs them, through the bundle.
   */
  bundles?: boolean;
  /**
   * The production edge in front of the gateway: CloudFront's behaviours and origin request
   * policies and the WAF web ACL, read from the prod stack's synthesized template (infra/twin/edge/).
   * The twin's address is then the edge's; requests straight to the gateway are refused, as on AWS.
   */
  edge?: boolean;
  /** With bundles: Lambda's instance model, one event at a time per instance, at most this many instances per function. */
  lambdaInstances?: number;
  /**
   * Data stores as AWS runs them: TLS only, with a certificate of the twin's own CA, Redis AUTH and
   * a MariaDB user for the functions, whose passwords they look up in Secrets Manager (the
   * emulator's stand-in). The process must trust the CA through NODE_EXTRA_CA_CERTS, as main.ts sees to.
   */
  awsStores?: boolean;
  /**
   * Where the functions send to SQS, when not to the emulator itself: a fault proxy in front of it
   * (load/chaos). The pollers always read from the emulator, as an event source mapping does not
   * share the functions' path to the queue.
   */
  functionsSqsEndpoint?: string;
  /**
   * Whether the table's schedule rules fire (the default). The fuzz run turns them off: it holds
   * every write in the stores to the one request it just sent.
   */
  schedules?: boolean;
  /** Fault switch, off by default: the event source mapping hands every batch to its function twice, shuffled (see PollerOptions.deliverTwice). */
  deliverTwice?: boolean;
  /**
   * Put before the names of the twin's queues: twins that share one emulator (the tests', through
   * AWS_ENDPOINT_URL) would otherwise share their queues, and one's consumers take another's messages.
   */
  queuePrefix?: string;
  /** Called once the gateway listens, before anything else starts; it answers 503 until the twin is ready. */
  onListening?(url: string): void;
  /** Called when a process the twin supervises (the consumers', MariaDB) died and has been started again, with a new pid. */
  onRestart?(service: 'consumers' | 'database'): void;
}
