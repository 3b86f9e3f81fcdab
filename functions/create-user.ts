import * as z from '../shared/platform/zod';
import { api } from '../shared/api/api';
import { clientAddress } from '../shared/platform/http/client-address';
import { json } from '../shared/platform/http/response';
import { EmailAddress, passwordProblem } from '../shared/sessions/account-rules';
import { signUpAndIn } from '../shared/sessions/sign-in';
import { SESSION_COOKIE } from '../shared/sessions/store';
import { User } from '../shared/sessions/account-rules';

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
const SignedUp = z.strictObject({ user: User });

/** Answers 201 with the session cookie POST /sessions sets, or without one when no session could be started (see signUpAndIn). */
export const handler = api({
  access: 'public',
  readsSessionCookie: true,
  body: NewAccount,
  answers: { 201: SignedUp },
  errors: ['EMAIL_TAKEN', 'RATE_LIMITED'],
}).handler(async (event) => {
  const { email, password } = event.input.body;
  const { user, cookie } = await signUpAndIn(email, password, clientAddress(event), event.cookieMap[SESSION_COOKIE]);
  return json(201, { user }, cookie ? { cookies: [cookie] } : {});
});
