import { createConnection, type RowDataPacket } from 'mysql2/promise';
import { describe, expect, it } from 'vitest';
import type { SESEvent } from 'aws-lambda';
import { handler } from '../../functions/receive-mail';
import { functions } from '../../functions/table';
import { capped } from '../../infra/twin/lambda/concurrency';
import { identify } from '../../shared/mail/identity';
import { poolConnectionIds, verbOf } from '../support/database';
import { lambdaContext } from '../support/events';
import { newsletterMail, readers, sesEvent, sesMessageId, storeRawMail, type Reader } from '../support/mail';
import { statementsDuring, statementsOverDuring } from '../../infra/twin/faults/query-log';
import { watchCommands, type SeenCommand } from '../support/redis-nodes';

const MAILS = 1_000;
const receiveMail = functions.find((f) => f.id === 'receive-mail')!;

/**
 * The mail function as SES and Lambda run it: each invocation with the function's own timeout
 * from when it starts, at most its reserved concurrency at once, the rest waiting in Lambda's
 * async queue as the twin holds them (capped).
 */
const invoke = capped(receiveMail, (event: SESEvent) => handler(event, lambdaContext(receiveMail.id, receiveMail.timeoutSeconds * 1_000)), 'wait');

/**
 * Only decides when to give up. The whole test took 36 s on a 2-core machine shared with other
 * suites and 96 s beside two CPU hogs as well (each invocation 0.4 s at the median); a machine 4x
 * slower and as busy stays within it.
 */
const GIVE_UP_MS = 600_000;

describe('a new newsletter arriving for 1,000 readers at once', () => {
  it('costs one lookup and one insert, and files 1,000 issues', { timeout: GIVE_UP_MS }, async () => {
    // Prepare: one mail per reader, each stored where SES would have put it.
    const listId = `stampede-${sesMessageId().slice(0, 12)}.bits.example`;
    const { key } = identify({ listId, listName: undefined, from: { name: '', address: 'news@bits.example' } }, { authenticated: true });
    const audience = await readers(MAILS);
    const mails = audience.map((reader) => ({ reader, messageId: sesMessageId() }));
    await Promise.all(mails.map(({ reader, messageId }) => storeRawMail(messageId, newsletterMail({ to: reader.address, listId: `<${listId}>` }))));

    // Act: every receipt event at once, as 1,000 SES deliveries would come; Lambda runs them at the function's cap.
    const statements = await statementsDuring(
      process.env.DATABASE_URL!,
      () => Promise.all(mails.map(({ reader, messageId }) => invoke(sesEvent(messageId, [reader.address])))),
      'newsletters',
      key,
    );

    // Assess: counted at the database, and every reader has the issue.
    expect(statements.filter((s) => /^\s*SELECT/i.test(s))).toHaveLength(1);
    expect(statements.filter((s) => /^\s*INSERT/i.test(s))).toHaveLength(1);
    const db = await createConnection({ uri: process.env.DATABASE_URL! });
    const [rows] = await db.query<RowDataPacket[]>(
      'SELECT COUNT(*) AS issues, COUNT(DISTINCT i.user_id) AS readers, COUNT(DISTINCT i.newsletter_id) AS newsletters FROM issues i JOIN newsletters n ON n.id = i.newsletter_id WHERE n.identity_key = ?',
      [key],
    );
    await db.end();
    expect(rows[0]).toMatchObject({ issues: MAILS, readers: MAILS, newsletters: 1 });
  });
});

describe('one mail', () => {
  const deliver = async (reader: Reader, listId: string) => {
    const messageId = sesMessageId();
    await storeRawMail(messageId, newsletterMail({ to: reader.address, listId }));
    await handler(sesEvent(messageId, [reader.address]), lambdaContext());
  };
  const verbs = (statements: string[]) => statements.map(verbOf).sort();

  it('is filed in six statements for a reader new to its newsletter and five for one who has it, none in a transaction', async () => {
    // Prepare: the newsletter already known, from another reader's mail.
    const [other, reader] = await readers(2);
    const listId = `<statements-${sesMessageId().slice(0, 12)}.bits.example>`;
    await deliver(other!, listId);
    const ours = await poolConnectionIds();

    // Act
    const first = await statementsOverDuring(process.env.DATABASE_URL!, ours, () => deliver(reader!, listId));
    const next = await statementsOverDuring(process.env.DATABASE_URL!, ours, () => deliver(reader!, listId));

    // Assess: the reader's address, their subscription, then the subscription (when new), the issue,
    // the outcome, and the reader's feed token (whose feeds' version the filing bumps: shared/mail/feed-access.ts).
    expect(verbs(first)).toEqual(['INSERT', 'INSERT', 'INSERT', 'SELECT', 'SELECT', 'SELECT']);
    expect(verbs(next)).toEqual(['INSERT', 'INSERT', 'SELECT', 'SELECT', 'SELECT']);
  });

  it('of a newsletter this instance has filed before asks Redis nothing of the newsletter, and is filed under its id', async () => {
    // Prepare: the newsletter resolved by this instance, from another reader's mail.
    const [other, reader] = await readers(2);
    const listId = `known-${sesMessageId().slice(0, 12)}.bits.example`;
    const { key } = identify({ listId, listName: undefined, from: { name: '', address: 'news@bits.example' } }, { authenticated: true });
    await deliver(other!, `<${listId}>`);
    const tag = `{newsletter:${key}}`;
    const commands = await watchCommands(tag);

    // Act
    let seen: SeenCommand[];
    try {
      await deliver(reader!, `<${listId}>`);
      seen = await commands.settled();
    } finally {
      commands.stop();
    }

    // Assess: no command named the newsletter's keys, and both issues went to one newsletter.
    expect(seen.filter((c) => c.args.some((arg) => arg.includes(tag)))).toEqual([]);
    const db = await createConnection({ uri: process.env.DATABASE_URL! });
    const [rows] = await db.query<RowDataPacket[]>(
      'SELECT COUNT(*) AS issues, COUNT(DISTINCT i.newsletter_id) AS newsletters FROM issues i JOIN newsletters n ON n.id = i.newsletter_id WHERE n.identity_key = ?',
      [key],
    );
    await db.end();
    expect(rows[0]).toMatchObject({ issues: 2, newsletters: 1 });
  });
});
