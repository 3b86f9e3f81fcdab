import * as z from '../platform/zod';

const ROLES = ['user', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/**
 * A user as the API shows one (sign-in, sign-up, GET /me): here, not beside the users table, so
 * that a function answering from the session alone does not carry the MySQL driver.
 */
export const User = z.strictObject({ id: z.int(), email: z.string(), role: z.enum(ROLES) });
export type User = z.infer<typeof User>;

/**
 * How an address is stored and compared: trimmed and lower-cased, nothing more. Dots and +tags
 * are kept, since what they mean is each mail provider's own business: a.b@x and ab+news@x are
 * accounts of their own.
 */
export const normaliseEmail = (email: string): string => email.trim().toLowerCase();

/** An email address as the API takes it: normalised first, then checked (users.email holds 254 characters). */
export const EmailAddress = z.pipe(z.string().check(z.overwrite(normaliseEmail)), z.email().check(z.maxLength(254)));

/** In Unicode code points of the NFKC form, which is what gets hashed: an emoji counts once. */
export const PASSWORD_LENGTH = { min: 12, max: 128 } as const;

/** A local part shorter than this is too likely to occur in a password by chance to be refused inside one. */
const CHECKED_LOCAL_PART_LENGTH = 3;

/**
 * Why a new password is refused, or undefined when it is not: too short or too long, or
 * containing its own address or the address's local part, in any case.
 */
export function passwordProblem(password: string, email: string): string | undefined {
  const hashed = password.normalize('NFKC');
  const length = [...hashed].length;
  if (length < PASSWORD_LENGTH.min) return `must be at least ${PASSWORD_LENGTH.min} characters long`;
  if (length > PASSWORD_LENGTH.max) return `must be at most ${PASSWORD_LENGTH.max} characters long`;
  const lowered = hashed.toLowerCase();
  const address = normaliseEmail(email);
  if (lowered.includes(address)) return 'must not contain the email address';
  const localPart = address.slice(0, address.lastIndexOf('@'));
  if (localPart.length >= CHECKED_LOCAL_PART_LENGTH && lowered.includes(localPart)) return "must not contain the email address's local part";
  return undefined;
}
