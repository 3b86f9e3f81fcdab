import { afterAll, beforeAll, describe, it } from 'vitest';
import { startTwin, type Twin } from '../../infra/twin/twin';
import { GIVE_UP_MS, runWalkthrough } from '../support/docs-walkthrough';

describe('the API walkthrough of docs/api.md', () => {
  let twin: Twin;

  beforeAll(async () => {
    twin = await startTwin({ port: 0, smtpPort: 0, stateDir: '.local/test', database: 'surge_test', queuePrefix: 'docs-walkthrough-' });
  });
  afterAll(() => twin?.stop());

  it('runs against the twin, every curl answering as the page says', () => runWalkthrough(twin), GIVE_UP_MS + 30_000);
});
