// The failure taxonomy (docs/failure-taxonomy.md) for adapters: HTTP error responses, provider
// error objects (in a body or inside a stream), network errors, timeouts and aborts, classified
// exactly as the reference client does (reference_impl/classify.h: the status decides first, then
// the provider's error body refines it). The tables are data in ../protocol.json, shared with the
// Python kit.
//
// Pure functions (the HTTP-date hint reads the clock only when the response has no Date header).
import { PROTOCOL } from './protocol.mjs';

// An adapter ends the call with this failure: thrown from an adapter's main(), it is reported
// as it is.
export class AdapterFailure extends Error {
  constructor(failureObject) {
    super(failureObject.message);
    this.name = 'AdapterFailure';
    this.failure = failureObject;
  }
}

// A protocol failure object. Class and retryable follow from the code unless `extra` says
// otherwise; `extra` may add status, retry_after_ms, request_id, partial_output.
export function failure(code, phase, message, extra = {}) {
  const [cls, retryable] = PROTOCOL.codes[code] ?? PROTOCOL.codes.UNKNOWN;
  return { code, class: cls, phase, retryable, partial_output: 'none', message, ...extra };
}

export const aborted = (phase, message = `cancelled by the caller during ${phase}`) =>
  failure('ABORTED', phase, message);

// ---- provider error objects --------------------------------------------------------------

const text = (v) => {
  if (v === undefined || v === null) return '';
  return typeof v === 'string' ? v : JSON.stringify(v);
};

// The provider's error object of a body ({"error":{...}}, as JSON text or parsed), or null.
function errorObject(body) {
  if (typeof body === 'string') {
    try {
      return errorObject(JSON.parse(body));
    } catch {
      return null;
    }
  }
  const error = body && typeof body === 'object' ? body.error : null;
  return error && typeof error === 'object' && !Array.isArray(error) ? error : null;
}

// The objects of a google.rpc.Status's `details` (Gemini), [] when it has none.
const details = (error) => (Array.isArray(error?.details) ? error.details : [])
  .filter((d) => d !== null && typeof d === 'object' && !Array.isArray(d));

// An AWS error type as Bedrock names it anywhere: "ThrottlingException:http://internal.amazon
// .com/coral/com.amazon.bedrock/" (x-amzn-errortype) or "com.amazon.coral.service#Throttling
// Exception" (a body's __type) is ThrottlingException; '' for anything that is not a string.
export const awsType = (value) =>
  (typeof value === 'string' ? value.split(':')[0].split('#').at(-1).trim() : '');

// [type, its object] of the AWS SDKs' union form of an exception, {"throttlingException":
// {"message": ...}} (a key ending in "Exception", in either case, that holds an object), or null.
export function awsException(obj) {
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) return null;
  return Object.entries(obj).find(([key, value]) => /exception$/i.test(key) && value !== null &&
                                  typeof value === 'object' && !Array.isArray(value)) ?? null;
}

// {type, code, message, retryInfo} of a provider error, whatever the envelope: {"error":{...}},
// {"type":"error","error":{...}}, {"error":"text"}, a bare {type, code, message}, or a string.
// Google's google.rpc.Status has no `type`: its `status` (RESOURCE_EXHAUSTED) stands for it.
// AWS's: a bare {"message"} with its type in "__type" (or only in the x-amzn-errortype header:
// classifyHttp), or the SDKs' union form of a stream's exception, {"throttlingException": {...}}.
// `retryInfo`: a details[] entry is a google.rpc.RetryInfo (the window says when it reopens).
export function errorFields(body) {
  if (typeof body === 'string') {
    try {
      return errorFields(JSON.parse(body));
    } catch {
      return { type: '', code: '', message: body, retryInfo: false };
    }
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    return { type: '', code: '', message: text(body), retryInfo: false };
  }
  const error = body.error;
  if (error && typeof error === 'object') {
    const retryInfo = details(error).some(
        (d) => typeof d['@type'] === 'string' && d['@type'].endsWith(PROTOCOL.retry_info_type));
    return { type: text(error.type) || text(error.status), code: text(error.code),
             message: text(error.message), retryInfo };
  }
  if (typeof error === 'string') return { type: '', code: '', message: error, retryInfo: false };
  const exception = body.type === undefined ? awsException(body) : null;
  if (exception) {
    const [type, fields] = exception;
    return { type, code: '', message: text(fields.message ?? fields.Message), retryInfo: false };
  }
  return { type: text(body.type) || awsType(body.__type), code: text(body.code),
           message: text(body.message) || text(body.detail) || text(body.Message),
           retryInfo: false };
}

// The code the shared table gives a provider error (its code first, then its type; an AWS type
// whatever the case of its first letter: protocol.json _aws_types), or null.
export function providerErrorCode({ type = '', code = '' }) {
  return (code && PROTOCOL.provider_errors[code]) || (type && PROTOCOL.provider_errors[type]) ||
      (type && PROTOCOL.provider_errors[type[0].toLowerCase() + type.slice(1)]) || null;
}

const worded = (message, entries) =>
  entries.some((all) => all.every((w) => message.toLowerCase().includes(w)));

// An error inside a 200 stream, classified like its HTTP twin (in-stream overloaded_error is
// OVERLOADED, as 529 is); an unknown one is UNKNOWN, as in the reference client. Without a
// status, its words refine the table's code (stream_refine: a server or unavailable error saying
// the model is overloaded is OVERLOADED, a rate limit with quota wording QUOTA). `errorObject`
// is the error event (a Responses `response.failed` carries its error in `response.error`) or
// the provider's error object it holds. `dialect`: the stream's; in a dialect whose errors name
// no kind (Ollama's {"error":"text"}), an error with neither type nor code is its
// `untyped_stream_error` (SERVER: the server failed mid-answer), whatever its words say.
export function classifyStreamError(errorObject, phase = 'stream', dialect = null) {
  const source = errorObject?.type === 'response.failed'
    ? errorObject.response?.error ?? errorObject.response : errorObject;
  const fields = errorFields(source);
  let code = providerErrorCode(fields);
  const untyped = PROTOCOL.dialects[dialect]?.untyped_stream_error;
  if (!code && untyped && !fields.type && !fields.code) {
    code = untyped;
  } else {
    code ??= 'UNKNOWN';
    const [wording, refined] = PROTOCOL.stream_refine[code] ?? [];
    if (wording && worded(fields.message, PROTOCOL.wording[wording])) code = refined;
  }
  const kind = [fields.type, fields.code].filter(Boolean).join('/') || 'error';
  return failure(code, phase, `in-stream error (${kind}): ${fields.message}`);
}

// ---- HTTP error responses ----------------------------------------------------------------

function statusRow(status) {
  const row = PROTOCOL.http_status[status];
  if (row) return row;
  if (status >= 500 && status <= 599) return ['SERVER', true];
  if (status >= 400 && status <= 499) return ['INVALID_REQUEST', false];
  return ['MALFORMED_RESPONSE', false];
}

// [code, retryable] after the body's refinement (reference_impl/classify.cc Refine).
function refine(status, [code, retryable], fields) {
  const table = providerErrorCode(fields);
  const { wording, refine_statuses: on } = PROTOCOL;
  if (table === 'OVERLOADED' || (status >= 500 && worded(fields.message, wording.overloaded_5xx))) {
    return ['OVERLOADED', true];
  }
  const contextWindow = table === 'CONTEXT_WINDOW_EXCEEDED' ||
      worded(fields.message, wording.context_window);
  if (on.context_window.includes(status) && contextWindow) {
    return ['CONTEXT_WINDOW_EXCEEDED', false];
  }
  // A quota wording beside a RetryInfo detail names a window that reopens: a rate limit.
  const quota = table === 'QUOTA' || (worded(fields.message, wording.quota) && !fields.retryInfo);
  if (on.quota.includes(status) && quota) return ['QUOTA', false];
  return [code, retryable];
}

const header = (headers, name) => {
  if (!headers) return null;
  if (typeof headers.get === 'function') return headers.get(name);
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  return key === undefined ? null : text(headers[key]);
};

function summary(status, message) {
  const flat = message.replace(/[\r\n]/g, ' ');
  const short = flat.length > 300 ? `${flat.slice(0, 300)}...` : flat;
  return short ? `HTTP ${status}: ${short}` : `HTTP ${status}`;
}

// The failure of an HTTP error response: `headers` a fetch Headers or a plain object, `body` the
// body text (or what of it was read). `now` (ms since the epoch) is for HTTP-date hints. AWS names
// its error's type in the x-amzn-errortype header: the type of a body that names none.
export function classifyHttp({ status, headers, body = '', now = Date.now() }) {
  const fields = errorFields(body);
  fields.type ||= awsType(header(headers, 'x-amzn-errortype'));
  const [code, retryable] = refine(status, statusRow(status), fields);
  const should = (header(headers, 'x-should-retry') ?? '').trim().toLowerCase();
  const out = failure(code, 'response-headers', summary(status, fields.message), {
    retryable: should === 'true' ? true : should === 'false' ? false : retryable,
    status,
  });
  for (const name of PROTOCOL.request_id_headers) {
    const id = (header(headers, name) ?? '').trim();
    if (id) {
      out.request_id = id;
      break;
    }
  }
  const hint = retryHint(headers, now) ?? bodyRetryHint(body);
  if (hint) out.retry_after_ms = hint.ms;
  return out;
}

// ---- Retry hints (retry-after-ms, retry-after, the body's retryDelay) ------------------------

const DECIMAL = /^(\d+\.?\d*|\.\d+)$/;
const MONTHS = 'jan feb mar apr may jun jul aug sep oct nov dec'.split(' ');
const DATE_FORMS = [
  // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
  /^[a-z]{3}, (\d{2}) ([a-z]{3}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) (?:gmt|utc)$/i,
  // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
  /^[a-z]{6,9}, (\d{2})-([a-z]{3})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) (?:gmt|utc)$/i,
];
const ASCTIME = /^[a-z]{3} ([a-z]{3}) +(\d{1,2}) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/i;

// An HTTP-date in any of RFC 9110's three forms, as ms since the epoch (UTC), or null.
export function parseHttpDate(value, now = Date.now()) {
  const v = value.trim();
  let parts = null;
  for (const form of DATE_FORMS) {
    const m = form.exec(v);
    if (m) parts = { day: m[1], month: m[2], year: m[3], h: m[4], mi: m[5], s: m[6] };
  }
  const a = ASCTIME.exec(v);
  if (a) parts = { day: a[2], month: a[1], year: a[6], h: a[3], mi: a[4], s: a[5] };
  if (!parts) return null;
  const month = MONTHS.indexOf(parts.month.toLowerCase());
  let year = Number(parts.year);
  if (parts.year.length === 2) {  // RFC 9110 §5.6.7: not more than 50 years in the future
    const thisYear = new Date(now).getUTCFullYear();
    year += Math.floor(thisYear / 100) * 100;
    if (year > thisYear + 50) year -= 100;
  }
  if (month < 0) return null;
  const ms = Date.UTC(year, month, Number(parts.day), Number(parts.h), Number(parts.mi),
                      Number(parts.s));
  return Number.isFinite(ms) ? ms : null;
}

// Rounded up (never early), but not for binary noise: 1.1 s is 1100.0000000000002 ms.
const toHint = (ms) => Math.min(PROTOCOL.max_retry_hint_ms, Math.max(0, Math.ceil(ms - 1e-6)));

// The strongest valid header hint, {ms, source}, or null: retry-after-ms, then retry-after
// (delay-seconds, or an HTTP-date measured from the response's Date header when it has one).
// Duplicated fields (joined by ", ") count by their longest valid value.
export function retryHint(headers, now = Date.now()) {
  const msValues = (header(headers, 'retry-after-ms') ?? '').split(',').map((s) => s.trim());
  const ms = msValues.filter((s) => DECIMAL.test(s)).map(Number);
  if (ms.length) return { ms: toHint(Math.max(...ms)), source: 'retry-after-ms' };
  const value = header(headers, 'retry-after');
  if (!value) return null;
  const seconds = value.split(',').map((s) => s.trim()).filter((s) => DECIMAL.test(s)).map(Number);
  if (seconds.length) return { ms: toHint(Math.max(...seconds) * 1000), source: 'retry-after' };
  const dateHeader = header(headers, 'date');
  const reference = (dateHeader && parseHttpDate(dateHeader, now)) ?? now;
  const dates = (value.match(/[^,]+,[^,]+|[^,]+/g) ?? [])
      .map((d) => parseHttpDate(d, now)).filter((d) => d !== null);
  if (!dates.length) return null;
  return { ms: toHint(Math.max(0, Math.max(...dates) - reference)), source: 'retry-after-date' };
}

const GO_UNITS = { ms: 1, us: 1e-3, '\u00b5s': 1e-3, '\u03bcs': 1e-3, ns: 1e-6, h: 3600000,
                   m: 60000, s: 1000 };
const GO_PART = /(\d+\.?\d*|\.\d+)(ms|us|\u00b5s|\u03bcs|ns|h|m|s)/y;

// A Go duration ("37s", "1.5s", "6m0s", "250ms", "0") as a hint in ms, or null.
export function parseGoDuration(value) {
  const v = value.trim();
  if (v === '0') return 0;
  let total = 0;
  GO_PART.lastIndex = 0;
  while (GO_PART.lastIndex < v.length) {
    const m = GO_PART.exec(v);
    if (!m) return null;
    total += Number(m[1]) * GO_UNITS[m[2]];
  }
  return v ? toHint(total) : null;
}

// The error body's hint, {ms, source: 'body'}, or null: Google's error.details[].retryDelay
// (its google.rpc.RetryInfo), the first valid one. `body`: the body text or its parsed JSON.
export function bodyRetryHint(body) {
  for (const detail of details(errorObject(body))) {
    if (typeof detail.retryDelay !== 'string') continue;
    const ms = parseGoDuration(detail.retryDelay);
    if (ms !== null) return { ms, source: 'body' };
  }
  return null;
}

// ---- network errors, timeouts, thrown errors ---------------------------------------------

const CONNECT_CODES = /ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|UND_ERR_CONNECT/;
const TIMEOUT_TEXT = /UND_ERR_(HEADERS|BODY|CONNECT)_TIMEOUT|ETIMEDOUT|TimeoutError|timed? ?out/i;

// The text of an error and its causes: names, codes, messages.
export function causeText(error) {
  const parts = [];
  for (let e = error, depth = 0; e && depth < 6; e = e.cause, depth++) {
    parts.push([e.name, e.code, e.message].filter(Boolean).join(' '));
  }
  return parts.join(' <- ');
}

// A network error of fetch (undici) or of the socket, at `phase` (where the wire was: connect
// before any response, stream while reading a body). Timeouts are TIMEOUT, the rest TRANSPORT;
// connection refusals and failed lookups are always phase connect.
export function classifyNetworkError(error, phase = 'connect') {
  const detail = causeText(error);
  // A fetch aborted by anything but the caller's cancel (handled before) is the library's timer.
  if (isAbort(error)) return failure('TIMEOUT', phase, `aborted by the library: ${detail}`);
  if (/UND_ERR_HEADERS_TIMEOUT/.test(detail)) return failure('TIMEOUT', 'response-headers', detail);
  if (/UND_ERR_BODY_TIMEOUT/.test(detail)) return failure('TIMEOUT', 'stream', detail);
  const where = CONNECT_CODES.test(detail) ? 'connect' : phase;
  return failure(TIMEOUT_TEXT.test(detail) ? 'TIMEOUT' : 'TRANSPORT', where, detail);
}

const isAbort = (error) => error?.name === 'AbortError' ||
    (error instanceof DOMException && error.code === DOMException.ABORT_ERR);

// A thrown error that no adapter-specific rule knew: an AdapterFailure as it is; an abort that
// was not our cancel is the library's own timer (TIMEOUT); JSON errors are MALFORMED_RESPONSE;
// network-looking errors by classifyNetworkError; anything else UNKNOWN.
export function classifyThrown(error, phase) {
  if (error instanceof AdapterFailure) return error.failure;
  if (isAbort(error)) return classifyNetworkError(error, phase);
  if (error instanceof SyntaxError) return failure('MALFORMED_RESPONSE', phase, causeText(error));
  const detail = causeText(error);
  if (TIMEOUT_TEXT.test(detail) ||
      /fetch failed|terminated|UND_ERR|ECONN|EPIPE|other side closed|socket/i.test(detail)) {
    return classifyNetworkError(error, phase);
  }
  return failure('UNKNOWN', phase, detail || String(error));
}
