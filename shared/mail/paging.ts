import * as z from '../platform/zod';

/**
 * The query of a list paged by id, newest first: `cursor` is the `next` of the previous page
 * (opaque to clients, the last id shown here), `limit` how many to answer at most.
 */
export const PageQuery = z.strictObject({
  cursor: z.optional(z.pipe(z.string().check(z.regex(/^[1-9][0-9]{0,15}$/)), z.transform(Number))),
  limit: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(100)), 50),
});
