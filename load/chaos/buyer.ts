// Its own module because the sale, the sale kinds and the counting all speak of buyers, and the
// kinds import the counting: with Buyer in sale.ts the three imported each other in a circle.

/** One signed-in buyer of the crowd, with the one Idempotency-Key of their one order (a coupon needs none). */
export interface Buyer {
  userId: number;
  cookie: string;
  key: string;
}
