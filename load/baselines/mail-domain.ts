// Its own module because both the baselines' table (which routes the mail) and the baseline mail
// function (which receives it) need it, and the table loads the function.

/** Mail for the baseline mail function goes to readers' tokens at this domain instead of the inbound domain. */
export const baselineMailDomain = (inboundDomain: string) => `baseline.${inboundDomain}`;
