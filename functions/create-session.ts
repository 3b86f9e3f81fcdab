import * as z from '../shared/platform/zod';
import { api } from '../shared/api/api';
import { clientAddress } from '../shared/platform/http/client-address';
import { json } from '../shared/platform/http/response';
import { EmailAddress } from '../shared/sessions/account-rules';
import { signInWithPassword } from '../shared/sessions/sign-in';
import { SESSION_COOKIE } from '../shared/sessions/store';
import { User } from '../shared/sessions/account-rules';

const Credentials = z.object({
  email: EmailAddress,
  password: z.string().check(z.minLength(1), z.maxLength(1024)),
});
const SignedIn = z.strictObject({ user: User });

export const handler = api({
  access: 'public',
  readsSessionCookie: true,
  body: Credentials,
  answers: { 201: SignedIn },
  errors: ['INVALID_CREDENTIALS', 'RATE_LIMITED'],
}).handler(async (event) => {
  const { email, password } = event.input.body;
  const { user, cookie } = await signInWithPassword(email, password, clientAddress(event), event.cookieMap[SESSION_COOKIE]);
  return json(201, { user }, { cookies: [cookie] });
});
