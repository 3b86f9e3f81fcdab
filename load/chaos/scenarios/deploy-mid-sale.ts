/**
 * A deploy in the middle of a sale, as a gradual deploy runs one (infra/stack/gradual.ts). The sale
 * starts on the release before (--from, by default 770ef0d, main before issue 39's first change),
 * its functions as bundles; once a third of the units are acknowledged, this checkout's migrations
 * are applied (mid-sale, as the deploy's trigger runs them), this checkout's twin starts beside it
 * on the same Redis, MariaDB and queue (bundles too), the front shifts a tenth of the requests to
 * it, then half, then all, and the release before stops. For those seconds both versions answer
 * and both drain the reservation queue, each sending and reading the other's hand-off messages.
 * Most of the crowd is held back until the shift begins (this checkout's twin takes a minute to
 * build and start, as a new version is built before CodeDeploy shifts to it), and arrives more
 * slowly than other scenarios' so that it meets every step. Every invariant of the suite holds,
 * and no acknowledged reservation is rejected.
 */
import { resolve } from 'node:path';
import { startTwinProcess, type TwinProcess } from '../../../infra/twin/twin-process';
import { startDatabase, startEmulator, type Service } from '../../../infra/twin/services/services';
import { migrate } from '../../../shared/platform/db/migrate';
import { signedInCrowdByTwin } from '../../support/crowd';
import { round } from '../../support/round';
import { worktreeOf } from '../../support/worktree';
import { startAliasFront, type AliasFront } from '../alias-front';
import { CHAOS_DATABASE, runScenario } from '../harness';
import type { ChaosOptions, ChaosReport } from '../report';

/** The release a deploy starts from unless --from names another: main before issue 39's first change. */
const DEFAULT_FROM = '770ef0dc0e3fa04a9bc5e19c3f5571772061b680';
/** Seconds at each step of the shift (a tenth, then half): a canary's minutes, in seconds. */
const STEP_S = { full: 5, small: 2 } as const;
const SHARES = [0.1, 0.5];
/** The share of the crowd that arrives once the shift begins. */
const HELD_BACK = 0.7;
/** Where earlier releases are checked out (their own `npm ci`), kept between runs. */
const CHECKOUTS_DIR = resolve('.local/checkouts');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function run(options: ChaosOptions): Promise<ChaosReport> {
  const from = options.from ?? DEFAULT_FROM;
  let stores: { database: Service; emulator: Service } | undefined;
  let shared: { env: Record<string, string>; stateDir: string; timeoutMs: number } | undefined;
  let oldTwin: TwinProcess | undefined;
  let newTwin: TwinProcess | undefined;
  let front: AliasFront | undefined;
  const marks = { migrated: 0, newServing: 0, allNew: 0, oldStopped: 0 };
  /** Requests each version answered while both served. */
  let whileBoth = { old: 0, new: 0 };
  const stopAll = async () => {
    await front?.close();
    await Promise.all([newTwin?.stop(), oldTwin?.stop()]);
    await Promise.all([stores?.database.stop(), stores?.emulator.stop()]);
  };
  return runScenario(
    {
      name: 'deploy-mid-sale',
      scale: { full: { arrivalMs: 30_000 }, small: { arrivalMs: 10_000 } },
      heldBack: HELD_BACK,
      // The crowd signed in before the deploy, on the release before: its sessions in that
      // release's format, which this checkout reads (a hash before ba0e6ca, docs/deploy.md).
      signInCrowd: signedInCrowdByTwin,
      async startTwin({ stateDir, env, timeoutMs }) {
        // The stores are the sale's, outliving either release's twin: neither owns them.
        const given = { DATABASE_URL: process.env.DATABASE_URL, AWS_ENDPOINT_URL: process.env.AWS_ENDPOINT_URL };
        delete process.env.DATABASE_URL;
        delete process.env.AWS_ENDPOINT_URL;
        try {
          stores = { database: await startDatabase(stateDir, CHAOS_DATABASE), emulator: await startEmulator(stateDir) };
        } finally {
          Object.assign(process.env, Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)));
        }
        shared = { env: { ...env, DATABASE_URL: stores.database.url, AWS_ENDPOINT_URL: stores.emulator.url }, stateDir: resolve(stateDir), timeoutMs };
        const dir = worktreeOf(from, CHECKOUTS_DIR, options.log);
        options.log(`deploy-mid-sale: the sale starts on ${from} (bundles)`);
        oldTwin = await startTwinProcess({
          stateDir: resolve(stateDir, 'release-before'),
          database: CHAOS_DATABASE,
          args: ['--bundles'],
          env: shared.env,
          timeoutMs,
          checkout: { dir, entry: 'infra/twin/main.ts' },
        });
        front = await startAliasFront(oldTwin.url);
        return { ...oldTwin, url: front.url, stop: stopAll };
      },
      async fault({ options: { log, scale }, sale }) {
        const started = Date.now();
        await migrate(stores!.database.url);
        marks.migrated = Date.now();
        log(`deploy-mid-sale: this checkout's migrations applied mid-sale; starting this checkout beside ${from}`);
        newTwin = await startTwinProcess({
          stateDir: resolve(shared!.stateDir, 'this-release'),
          database: CHAOS_DATABASE,
          args: ['--bundles'],
          env: shared!.env,
          timeoutMs: shared!.timeoutMs,
        });
        front!.addNewVersion(newTwin.url);
        marks.newServing = Date.now();
        const before = { ...front!.served };
        for (const [i, share] of SHARES.entries()) {
          front!.shift(share);
          log(`deploy-mid-sale: ${share * 100} % of requests to this checkout`);
          if (i === 0) sale!.release();
          await sleep(STEP_S[scale] * 1000);
        }
        front!.shift(1);
        marks.allNew = Date.now();
        whileBoth = { old: front!.served.old - before.old, new: front!.served.new - before.new };
        await front!.oldDrained();
        await oldTwin!.stop();
        marks.oldStopped = Date.now();
        log(
          `deploy-mid-sale: ${from} stopped ${round((marks.oldStopped - started) / 1000)} s after the deploy began; both served ${round((marks.allNew - marks.newServing) / 1000)} s`,
        );
      },
      assess(_, { ledger }) {
        return {
          invariants: {
            no_acknowledged_rejected: ledger.rejectedAcknowledged === 0,
            both_versions_served: whileBoth.old > 0 && whileBoth.new > 0,
          },
          extra: {
            from,
            requests_by_version: { ...front!.served },
            requests_while_both_served: whileBoth,
            both_serving_s: round((marks.allNew - marks.newServing) / 1000),
            this_release_starting_s: round((marks.newServing - marks.migrated) / 1000),
          },
        };
      },
    },
    { ...options, bundles: true },
  );
}
