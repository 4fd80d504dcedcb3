// Observation of every attempt on the wire: a fetch wrapper that a library is given instead of
// the global fetch (or that replaces it), changing nothing about the requests or responses.
//
//   - Each request the library sends is one attempt: response/start {attempt n, response_id}.
//     With routes (the call line's `routes`), the request's URL says which route it went to:
//     the route whose base_url it starts with is its route_id, on every event of the attempt
//     and in its failure, so a router that reports nothing itself is still attributed.
//   - What happened to it is recorded from the wire: the status and headers, an error body (read
//     from a Response.clone(), at most 250 ms and 64 KiB, since libraries often cancel a retried
//     response's body unread), the network error of a failed fetch, the first error event of an
//     event stream (or error line of an application/x-ndjson stream: Ollama's, or exception of an
//     application/vnd.amazon.eventstream: Bedrock's; classified in the dialect of the attempt's
//     route, else the call's), or the error that ended the body stream
//     (the body is passed through a transparent stream that sees its events, its end or its
//     error).
//   - When a new request starts after the previous attempt failed, that attempt's
//     response/interrupted (its classified failure) is written BEFORE the new request goes out,
//     so libraries without a retry hook still announce retries in the right order. A library
//     that does announce its retries (a log line, a callback) calls retrying() at that moment
//     instead, with the delay when it is known (scheduled_retry_ms is never guessed) and, when
//     the library classified the failure itself, that classification: retrying({failure}). The
//     kit then writes that attempt's one response/interrupted; an adapter never writes it itself.
//
// One Wire per call; single-threaded like the rest of Node.
import { emit } from './protocol.mjs';
import { classifyHttp, classifyNetworkError, classifyStreamError, failure } from './classify.mjs';
import { SseDecoder, isErrorEvent } from './sse.mjs';
import { NdjsonDecoder } from './ndjson.mjs';
import { EventStreamDecoder } from './eventstream.mjs';

const ERROR_BODY_MS = 250;
const ERROR_BODY_BYTES = 65536;
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

export const responseId = (attempt) => `attempt-${attempt}`;

export class Wire {
  // `baseFetch`: what the library would have used (default: globalThis.fetch at construction).
  // `routes`: the call line's routes ([{id, base_url, dialect}]), longest base_url first.
  // `dialect`: the call's (an error inside a stream is classified in it, or in its route's).
  constructor({ baseFetch = globalThis.fetch, routes = [], dialect = null } = {}) {
    this.baseFetch = baseFetch;
    this.dialect = dialect;
    this.routes = routes
      .map((r) => ({ id: r.id, dialect: r.dialect ?? null,
                     prefix: `${r.base_url.replace(/\/+$/, '')}/` }))
      .sort((x, y) => y.prefix.length - x.prefix.length);
    this.attempts = [];     // one record per request, in order
    this.pending = null;    // a response/interrupted being written (it may wait for a body)
    this.fetch = (input, init) => this.#send(input, init);
  }

  get current() {
    return this.attempts.at(-1) ?? null;
  }

  // Ids of the latest attempt, for events ({} before the first request).
  ids() {
    const a = this.current;
    if (!a) return {};
    return { response_id: responseId(a.n), attempt: a.n, ...(a.route && { route_id: a.route }) };
  }

  // The route a request to `input` (a URL string, URL or Request) goes to, or null.
  #routeOf(input) {
    const url = typeof input === 'string' ? input : input?.href ?? input?.url ?? '';
    return this.routes.find((r) => url.startsWith(r.prefix)) ?? null;
  }

  // Where the call is now: the phase a cancel or a library error happened in. An attempt that
  // got an HTTP error status is at response-headers (where its failure is) until the library
  // announces its retry; from then on the call is between attempts, which the reference client
  // calls connect (a cancel during backoff is ABORTED at connect).
  phase() {
    const a = this.current;
    if (!a || a.announced || a.error) return 'connect';
    if (!a.status || !a.ok) return 'response-headers';
    return a.bodyDone ? 'finish' : 'stream';
  }

  // Counts output of the current attempt (partial_output of its failure).
  sawOutput() {
    if (this.current) this.current.chunks++;
  }

  // The library said it will retry the current attempt (before its wait): writes the attempt's
  // response/interrupted now, and never again. `delayMs` and `source` (a delay_source) only when
  // the library states them. `failure`: the library's own classification of the attempt (a whole
  // failure object: failure(code, phase, message, extra)), used instead of what the wire saw;
  // its partial_output and route_id are filled in from the wire when it leaves them at their
  // defaults.
  retrying({ delayMs, source, message, failure: classified } = {}) {
    const a = this.current;
    if (!a || a.announced) return this.pending;
    a.announced = true;
    const schedule = delayMs === undefined ? {} : {
      scheduled_retry_ms: Math.max(0, Math.round(delayMs)),
      delay_source: source ?? 'backoff',
    };
    this.pending = this.#announce(a, schedule, message, classified);
    return this.pending;
  }

  // Resolves once every announcement has been written.
  settled() {
    return this.pending ?? Promise.resolve();
  }

  // The failure the wire saw for the latest attempt (HTTP error, network error, broken body),
  // or null when the wire saw nothing wrong. Waits for an error body.
  async lastFailure() {
    const a = this.current;
    return a ? wireFailure(a, await a.bodyText) : null;
  }

  async #send(input, init) {
    await this.pending;
    const previous = this.current;
    if (previous && !previous.announced) {
      previous.announced = true;
      this.pending = this.#announce(previous, {}, 'a new request started');
      await this.pending;
    }
    const a = { n: this.attempts.length + 1, chunks: 0, announced: false, status: 0, ok: false,
                headers: null, bodyText: null, error: null, streamError: null, bodyError: null,
                bodyDone: false, route: null, dialect: this.dialect };
    const route = this.#routeOf(input);
    if (route) Object.assign(a, { route: route.id, dialect: route.dialect ?? this.dialect });
    this.attempts.push(a);
    emit('response/start', this.ids());
    let response;
    try {
      response = await this.baseFetch(input, init);
    } catch (error) {
      a.error = error;
      throw error;
    }
    Object.assign(a, { status: response.status, ok: response.ok, headers: response.headers });
    if (!response.ok) {
      if (response.body) a.bodyText = readBriefly(response.clone());
      return response;
    }
    return observeBody(response, a);
  }

  async #announce(a, schedule, why, classified = null) {
    let failed = classified ?? wireFailure(a, await a.bodyText) ??
        failure('UNKNOWN', 'finish', 'the library sent a new request after this response; ' +
                'the reason is not visible on the wire');
    if (a.chunks > 0 && failed.partial_output === 'none') {
      failed = { ...failed, partial_output: 'uncommitted' };
    }
    if (why) failed = { ...failed, message: `${failed.message} (${why})` };
    const route = a.route ? { route_id: a.route } : {};
    emit('response/interrupted', { response_id: responseId(a.n), attempt: a.n, ...route,
                                   failure: { ...failed, ...route }, ...schedule });
  }
}

// The failure recorded for attempt `a`, or null when nothing failed on the wire.
function wireFailure(a, bodyText) {
  if (a.error) return classifyNetworkError(a.error, 'response-headers');  // connect errors say so
  if (a.status && !a.ok) {
    return classifyHttp({ status: a.status, headers: a.headers, body: bodyText ?? '' });
  }
  if (a.streamError) return a.streamError;  // the provider said why, before any cut
  if (a.bodyError) return classifyNetworkError(a.bodyError, 'stream');
  return null;
}

// The body passed through unchanged, with its end or error recorded on `a`.
function observeBody(response, a) {
  if (!response.body || NULL_BODY_STATUSES.has(response.status)) {
    a.bodyDone = true;
    return response;
  }
  const reader = response.body.getReader();
  const type = response.headers.get('content-type') ?? '';
  let framer = /text\/event-stream/i.test(type) ? new SseDecoder()
    : /application\/x-ndjson/i.test(type) ? new NdjsonDecoder()
      : /application\/vnd\.amazon\.eventstream/i.test(type) ? new EventStreamDecoder() : null;
  const body = new ReadableStream({
    async pull(controller) {
      let step;
      try {
        step = await reader.read();
      } catch (error) {
        a.bodyError = error;
        controller.error(error);
        return;
      }
      if (step.done) {
        a.bodyDone = true;
        controller.close();
      } else {
        if (framer && !a.streamError) {
          try {
            a.streamError = firstStreamError(framer.push(step.value), a.dialect);
          } catch {
            framer = null;  // a malformed event stream: the library's to report
          }
        }
        controller.enqueue(step.value);
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  }, { highWaterMark: 0 });
  const observed = new Response(body, {
    status: response.status, statusText: response.statusText, headers: response.headers,
  });
  for (const key of ['url', 'redirected', 'type']) {
    Object.defineProperty(observed, key, { value: response[key] });
  }
  return observed;
}

// The failure of the first error event among `events` (of a stream in `dialect`), or null. Only
// events that can be one are parsed (the library parses them all anyway).
function firstStreamError(events, dialect) {
  for (const { event, data } of events) {
    if (event !== 'error' && !/"error"|response\.failed/.test(data)) continue;
    let obj;
    try {
      obj = JSON.parse(data);
    } catch {
      continue;  // not JSON: the library's to report
    }
    if (!obj || typeof obj !== 'object' || Array.isArray(obj)) continue;
    if (event === 'error' || isErrorEvent(obj, dialect)) {
      return classifyStreamError(obj, 'stream', dialect);
    }
  }
  return null;
}

// The text of a response body, or what of it arrives within ERROR_BODY_MS; never throws.
async function readBriefly(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const timer = setTimeout(() => reader.cancel().catch(() => {}), ERROR_BODY_MS);
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      if (text.length > ERROR_BODY_BYTES) break;
    }
  } catch {
    // cut short: keep what came
  } finally {
    clearTimeout(timer);
    reader.cancel().catch(() => {});
  }
  return text;
}
