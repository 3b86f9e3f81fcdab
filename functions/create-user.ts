import * as z from '../shared/platform/zod';
import { api } from '../shared/api/api';
import { clientAddress } from '../shared/platform/http/client-address';
import { takeSignUp } from '../shared/limits/rate';
import { json } from '../shared/platform/http/response';
import { logger } from '../shared/platform/logger';
import { EmailAddress, passwordProblem } from '../shared/sessions/account-rules';
import { SESSION_COOKIE, signIn } from '../shared/sessions/store';
import { signUp } from '../shared/sessions/users';

const NewAccount = z
  .strictObject({
    email: EmailAddress,
    // Bounded here so an oversized string is refused before it is normalised; the policy's own limit is lower.
    password: z.string().check(z.maxLength(1024)),
  })
  .check(
    z.superRefine((account, ctx) => {
      const problem = passwordProblem(account.password, account.email);
      if (problem) ctx.addIssue({ code: 'custom', message: `The password ${problem}`, path: ['password'], input: account.password });
    }),
  );

/**
 * Signs the new user up, then in, with the session cookie POST /sessions sets. The account is
 * what was asked for: if no session can be started after it, the answer is still 201, without a
 * cookie, so that the client signs in rather than retrying into EMAIL_TAKEN.
 */
export const handler = api({ access: 'public', body: NewAccount }).handler(async (event) => {
  const { email, password } = event.input.body;
  await takeSignUp(clientAddress(event));
  const user = await signUp(email, password);
  const cookie = await signIn(user, event.cookieMap[SESSION_COOKIE]).catch((error: Error) => {
    logger.warn('Signed up, but the session could not be started', { userId: user.id, error: { name: error.name, message: error.message } });
    return undefined;
  });
  return json(201, { user }, cookie ? { cookies: [cookie] } : {});
});
