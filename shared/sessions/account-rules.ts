import * as z from '../zod';

/**
 * How an address is stored and compared: trimmed and lower-cased, nothing more. Dots and +tags
 * are kept, since what they mean is each mail provider's own business: a.b@x and ab+news@x are
 * accounts of their own.
 */
export const normaliseEmail = (email: string): string => email.trim().toLowerCase();

/** An email address as the API takes it: normalised first, then checked (users.email holds 254 characters). */
export const EmailAddress = z.pipe(z.string().check(z.overwrite(normaliseEmail)), z.email().check(z.maxLength(254)));
