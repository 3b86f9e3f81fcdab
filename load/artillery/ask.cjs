// The request plumbing of the Artillery processors (reference.cjs, waiting-room.cjs): a virtual
// user's request, sent again as a real client does when it may be. A request unanswered within the
// buyer's timeout, answered 503 or 429 (the API's retry-safe answers, which say when to come
// back in Retry-After), or, on a route whose function has a ceiling (an order, a coupon), answered
// API Gateway's own 500 (an invocation throttled past it, or one that failed: docs/deploy.md), is
// sent again, at most `attempts` times in all.
//
// The requests are made here, not by Artillery's HTTP engine, which ends a virtual user at its
// first timeout. Each attempt is counted as that engine counts a request (http.requests,
// http.codes.<status>, http.response_time), so `ensure` and the report read as before; a timeout
// is counted as <request>.timeouts. <request>.answered_after_retry counts the users whose answer
// needed a retry, <request>.retries the retries and <request>.retries_after.<why> why
// (load/run-artillery.mjs sums them).
const { appendFileSync } = require('node:fs');
const http = require('node:http');
const https = require('node:https');

/**
 * Connections shared by this worker's virtual users, as Artillery's `http.pool` shares them. To a
 * target on 127.0.0.0/8 each connection leaves from an address of its own there: a crowd comes
 * from many addresses, and the prod stack's web ACL (the twin's --edge) holds each address to its
 * own rate, which one address's whole run would pass (docs/benchmarks.md, "Artillery").
 */
const agents = new Map();
function agentFor(url, connections) {
  const key = `${url.protocol}${connections}`;
  if (!agents.has(key)) {
    const Agent = url.protocol === 'https:' ? https.Agent : http.Agent;
    const loopback = /^127\.\d+\.\d+\.\d+$/.test(url.hostname);
    const pool = loopback
      ? Array.from(
          { length: connections },
          (_, i) => new Agent({ keepAlive: true, maxSockets: 1, maxFreeSockets: 1, localAddress: `127.0.${1 + (i >> 8)}.${1 + (i & 255)}` }),
        )
      : [new Agent({ keepAlive: true, maxSockets: connections, maxFreeSockets: connections })];
    agents.set(key, { pool, next: 0 });
  }
  const shared = agents.get(key);
  return shared.pool[shared.next++ % shared.pool.length];
}

/**
 * Who the buyers say they are: AWS's core rule set, in the prod stack's web ACL, blocks every
 * request without a User-Agent (NoUserAgent_HEADER), and node's http sends none of its own.
 */
const USER_AGENT = 'Surge load test (Artillery)';

/** One HTTP request: its status, headers and body, or a rejection (code ETIMEDOUT) past timeoutMs. */
function send(url, { method, headers, body, timeoutMs, connections }) {
  return new Promise((resolve, reject) => {
    const client = url.protocol === 'https:' ? https : http;
    const request = client.request(url, { method, headers: { 'user-agent': USER_AGENT, ...headers }, agent: agentFor(url, connections) }, (response) => {
      const chunks = [];
      response.on('data', (chunk) => chunks.push(chunk));
      response.on('end', () => {
        clearTimeout(timer);
        resolve({ status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') });
      });
      response.on('error', fail);
    });
    const timer = setTimeout(() => {
      const error = new Error(`no answer within ${timeoutMs} ms`);
      error.code = 'ETIMEDOUT';
      request.destroy(error);
    }, timeoutMs);
    function fail(error) {
      clearTimeout(timer);
      reject(error);
    }
    request.on('error', fail);
    request.end(body);
  });
}

/** Answers a client may send again unchanged: no answer at all, or the API's retry-safe ones. */
const RETRY_STATUSES = new Set([429, 503]);
/**
 * API Gateway's answer to an invocation that failed, timed out or was throttled. Where the
 * function has a ceiling (`ceilinged`), the API document names it as the throttle's answer, and an
 * order or a coupon may be sent again (under its key; a second coupon request is answered with the
 * first). Elsewhere only a fault gives it, and a function's own 500 (INTERNAL) is a fault always:
 * those end the buyer, so that the run shows them.
 */
const GATEWAY_FAILURE = '{"message":"Internal Server Error"}';
const retrySafe = (answer, ceilinged) => RETRY_STATUSES.has(answer.status) || (ceilinged === true && answer.status === 500 && answer.body === GATEWAY_FAILURE);
/** Connection errors after which the request may or may not have arrived: the same as no answer. */
const RETRY_ERRORS = new Set(['ETIMEDOUT', 'ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ECONNABORTED']);
/** Without Retry-After, the wait before the n-th retry: 0.5 s, 1 s, 2 s … with up to half again at random. */
const backoffMs = (retry) => 500 * 2 ** (retry - 1) * (1 + Math.random() / 2);

/**
 * Sends one request until it has an answer other than a retry-safe one, or `attempts` were made;
 * returns that answer and whether it needed a retry, and throws when none came.
 */
async function askWithRetries(name, context, events, request) {
  const vars = context.vars;
  const url = new URL(request.path, vars.target);
  const options = { ...request, timeoutMs: Number(vars.timeoutSeconds) * 1000, connections: Number(vars.connections) };
  const attempts = Number(vars.attempts);
  for (let attempt = 1; ; attempt += 1) {
    events.emit('counter', 'http.requests', 1);
    events.emit('rate', 'http.request_rate');
    const started = performance.now();
    let answer;
    let failure;
    try {
      answer = await send(url, options);
    } catch (error) {
      failure = error;
    }
    if (answer) {
      events.emit('counter', 'http.responses', 1);
      events.emit('counter', `http.codes.${answer.status}`, 1);
      events.emit('histogram', 'http.response_time', performance.now() - started);
      if (!retrySafe(answer, request.ceilinged)) {
        if (attempt > 1) events.emit('counter', `${name}.answered_after_retry`, 1);
        return { ...answer, retried: attempt > 1 };
      }
    } else {
      if (!RETRY_ERRORS.has(failure.code)) throw failure;
      if (failure.code === 'ETIMEDOUT') events.emit('counter', `${name}.timeouts`, 1);
    }
    if (attempt === attempts) {
      throw answer ? Object.assign(new Error(`answered ${answer.status} ${attempts} times`), { code: `answered_${answer.status}` }) : failure;
    }
    const why = answer ? String(answer.status) : failure.code;
    events.emit('counter', `${name}.retries`, 1);
    events.emit('counter', `${name}.retries_after.${why}`, 1);
    const retryAfter = Number(answer?.headers['retry-after'] ?? NaN);
    await new Promise((resolve) => setTimeout(resolve, retryAfter >= 0 ? retryAfter * 1000 : backoffMs(attempt)));
  }
}

/** An answer the scenario does not expect ends the virtual user as an error, as `expect` did. */
function unexpected(answer, expected) {
  return Object.assign(new Error(`answered ${answer.status}, expected ${expected}: ${answer.body.slice(0, 200)}`), { code: `unexpected_${answer.status}` });
}

function recordAccepted(id) {
  appendFileSync(process.env.SURGE_ACCEPTED_FILE, `${id}\n`);
}

module.exports = { askWithRetries, unexpected, recordAccepted };
