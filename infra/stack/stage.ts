import { RemovalPolicy } from 'aws-cdk-lib';

/** The stages a deployment can be, chosen with `-c stage=…`. */
export const STAGES = ['dev', 'prod'] as const;
export type Stage = (typeof STAGES)[number];

/**
 * The start of a stack's physical names (functions, queues, the receipt rule set, the API): by
 * stage, so that a dev and a prod stack can share an account and region; `surge` alone keeps the
 * names of a stack deployed before names had a stage (`-c legacyNames=true`, docs/deploy.md).
 */
export const namePrefixOf = (stage: Stage, legacyNames: boolean): string => (legacyNames ? 'surge' : `surge-${stage}`);

/** The stack's name, by stage as its resources' names are; `Surge` for a stack deployed before. */
export const stackNameOf = (stage: Stage, legacyNames: boolean): string => (legacyNames ? 'Surge' : `Surge-${stage}`);

/** What a stage keeps when CloudFormation deletes one of its resources (see KEPT_BY). */
export interface Kept {
  deletionProtection: boolean;
  databases: RemovalPolicy;
  buckets: RemovalPolicy;
  logs: RemovalPolicy;
  secrets: RemovalPolicy;
}

/**
 * What each stage keeps when CloudFormation deletes a resource: on `cdk destroy`, on a
 * replacement, and on the rollback of a failed first deploy.
 */
export const KEPT_BY: Record<Stage, Kept> = {
  // Nothing: a failed first deploy rolls back to nothing, and destroying the stack leaves nothing.
  dev: {
    deletionProtection: false,
    databases: RemovalPolicy.DESTROY,
    buckets: RemovalPolicy.DESTROY,
    logs: RemovalPolicy.DESTROY,
    secrets: RemovalPolicy.DESTROY,
  },
  // The data: Aurora and the cache as a final snapshot, the rest as it is.
  prod: {
    deletionProtection: true,
    databases: RemovalPolicy.SNAPSHOT,
    buckets: RemovalPolicy.RETAIN,
    logs: RemovalPolicy.RETAIN,
    secrets: RemovalPolicy.RETAIN,
  },
};
