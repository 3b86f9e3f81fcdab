/**
 * The newsletter issue the mail benches send: a few KB of the markup mailers send, as the mail
 * bench sends it over SMTP and `npm run instructions` stores it raw, so both measure one message.
 */
import MailComposer from 'nodemailer/lib/mail-composer';

export const NEWSLETTER_ADDRESS = 'news@bits.example';
export const NEWSLETTER_SENDER = `Bench Bits <${NEWSLETTER_ADDRESS}>`;

/**
 * Paragraphs of the issue's HTML: 30 make ~4 KB; 150 make an issue whose `INSERT` passes the 16 KB
 * at which RDS Proxy pins a connection, as most real newsletters' do (docs/twin.md).
 */
const PARAGRAPHS = Number(process.env.BENCH_ISSUE_PARAGRAPHS ?? 30);

/** A newsletter-sized HTML body: a few KB of the markup mailers send. */
export const newsletterHtml = (n: number) =>
  `<table width="600" align="center"><tr><td><h1>Issue ${n}</h1>${'<p style="color:#333;font-size:16px">A paragraph of the week&rsquo;s news, with <a href="https://bits.example/read">a link</a>.</p>'.repeat(PARAGRAPHS)}<img src="https://bits.example/logo.png" alt="logo"></td></tr></table>`;

/** The fields of issue n of the newsletter listId, to `to`, as nodemailer takes them. */
export const newsletterIssue = (n: number, to: string, listId: string, subject: string) => ({
  from: NEWSLETTER_SENDER,
  to,
  subject,
  html: newsletterHtml(n),
  text: 'The week in bits.',
  list: { id: listId },
});

/** The raw message nodemailer would send for those fields. */
export function rawNewsletterIssue(...fields: Parameters<typeof newsletterIssue>): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    new MailComposer(newsletterIssue(...fields)).compile().build((error, message) => (error ? reject(error) : resolve(message))),
  );
}
