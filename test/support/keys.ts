/** A Redis KEYS pattern that matches `literal` itself and nothing else it happens to glob. */
export const literalPattern = (literal: string) => literal.replace(/[*?[\]\\]/g, '\\$&');
