// The AWS event stream framing of an application/vnd.amazon.eventstream body (Amazon Bedrock's
// ConverseStream), read incrementally. A message is a prelude (total length and headers length,
// uint32 big-endian, then the CRC-32 of those 8 bytes), its headers, its payload and the CRC-32
// of everything before it. EventStreamDecoder.messages(bytes) returns the messages those bytes
// complete as {headers, payload}, a message split across reads waiting for its rest;
// push(bytes) returns them as {event, data}, the shape SseDecoder gives an SSE event, so that
// parseEvent and Output read every framing alike: an event message is its :event-type and its
// payload's text; an exception message (:message-type exception) is {event: 'error', data} with
// data the AWS SDKs' union object, {"throttlingException": {"message": ...}}. finish() ends the
// body and returns how many bytes of an unfinished message it discarded (a cut stream: the
// dialect then misses its terminator).
//
// A wrong CRC, a total length under 16, headers that run past the payload or a header value of an
// unknown type is a malformed stream: AdapterFailure(MALFORMED_RESPONSE), thrown once the whole
// messages before it were returned, and again by every later call. Whether a payload is JSON,
// and of which shape, is the dialect's to say (parseEvent, Output).
import { AdapterFailure, failure } from './classify.mjs';

const PRELUDE_BYTES = 12;
const MIN_MESSAGE_BYTES = 16;  // a prelude and the message CRC: no headers, no payload
// Header value types with a fixed size (2 byte, 3 short, 4 integer, 5 long, 8 timestamp, 9 uuid);
// 0 and 1 (true, false) have no value, 6 (bytes) and 7 (string) a uint16 length first.
const FIXED_SIZES = new Map([[2, 1], [3, 2], [4, 4], [5, 8], [8, 8], [9, 16]]);

// CRC-32/IEEE (zlib's crc32), by table.
const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

export function crc32(bytes, start = 0, end = bytes.length) {
  let c = 0xFFFFFFFF;
  for (let i = start; i < end; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xFF] ^ (c >>> 8);
  return (c ^ 0xFFFFFFFF) >>> 0;
}

const malformed = (why) =>
  new AdapterFailure(failure('MALFORMED_RESPONSE', 'stream', `malformed event stream: ${why}`));
const utf8 = new TextDecoder();

export class EventStreamDecoder {
  #buffer = new Uint8Array(0);
  #broken = null;  // the failure that broke the stream: every later push throws it again

  // The messages completed by `bytes` (a Uint8Array), as {headers: {name: value}, payload}. The
  // whole messages before a malformed one are returned first, as they would be had the malformed
  // one come in a later read; the next call throws.
  messages(bytes) {
    if (this.#broken) throw this.#broken;
    const buffer = concat(this.#buffer, bytes);
    const out = [];
    let offset = 0;
    try {
      for (let length; (length = messageLength(buffer, offset)) !== null;) {
        if (buffer.length - offset < length) break;
        out.push(readMessage(buffer.subarray(offset, offset + length)));
        offset += length;
      }
    } catch (error) {
      this.#broken = error;
      this.#buffer = new Uint8Array(0);
      if (out.length === 0) throw error;
      return out;
    }
    this.#buffer = buffer.slice(offset);
    return out;
  }

  // The events completed by `bytes`, as {event, data} for parseEvent.
  push(bytes) {
    return this.messages(bytes).map(messageEvent).filter((event) => event !== null);
  }

  // The body ended: an unfinished message is discarded (a cut stream); returns its bytes. Throws
  // when the stream was malformed.
  finish() {
    if (this.#broken) throw this.#broken;
    const discarded = this.#buffer.length;
    this.#buffer = new Uint8Array(0);
    return discarded;
  }
}

function concat(a, b) {
  if (a.length === 0) return b;
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

const uint32 = (bytes, at) =>
  ((bytes[at] << 24) | (bytes[at + 1] << 16) | (bytes[at + 2] << 8) | bytes[at + 3]) >>> 0;
const uint16 = (bytes, at) => (bytes[at] << 8) | bytes[at + 1];

// The total length of the message at `offset` once its prelude is there (checked), else null.
function messageLength(buffer, offset) {
  if (buffer.length - offset < PRELUDE_BYTES) return null;
  if (crc32(buffer, offset, offset + 8) !== uint32(buffer, offset + 8)) {
    throw malformed('the prelude CRC does not match');
  }
  const total = uint32(buffer, offset);
  const headers = uint32(buffer, offset + 4);
  if (total < MIN_MESSAGE_BYTES) throw malformed(`a message of ${total} bytes (16 at least)`);
  if (headers > total - MIN_MESSAGE_BYTES) {
    throw malformed(`${headers} bytes of headers in a message of ${total}`);
  }
  return total;
}

// One whole message (its prelude checked): the message CRC, then its headers and payload.
function readMessage(message) {
  const end = message.length - 4;
  if (crc32(message, 0, end) !== uint32(message, end)) {
    throw malformed('the message CRC does not match');
  }
  const headersEnd = PRELUDE_BYTES + uint32(message, 4);
  return { headers: readHeaders(message.subarray(PRELUDE_BYTES, headersEnd)),
           payload: message.slice(headersEnd, end) };
}

// The headers block as {name: value}: strings as text, bools as booleans, the rest as bytes.
function readHeaders(block) {
  const headers = {};
  const take = (at, n) => {
    if (at + n > block.length) throw malformed('a header runs past the headers');
    return block.subarray(at, at + n);
  };
  for (let at = 0; at < block.length;) {
    const nameLength = take(at, 1)[0];
    const name = utf8.decode(take(at + 1, nameLength));
    at += 1 + nameLength;
    const type = take(at, 1)[0];
    at += 1;
    let value;
    if (type === 0 || type === 1) {
      value = type === 0;
    } else if (type === 6 || type === 7) {
      const length = uint16(take(at, 2), 0);
      const bytes = take(at + 2, length);
      value = type === 7 ? utf8.decode(bytes) : bytes.slice();
      at += 2 + length;
    } else if (FIXED_SIZES.has(type)) {
      value = take(at, FIXED_SIZES.get(type)).slice();
      at += FIXED_SIZES.get(type);
    } else {
      throw malformed(`a header of unknown value type ${type}`);
    }
    headers[name] = value;
  }
  return headers;
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

// One message as {event, data} (null for a message type that is neither an event nor an error):
// an event (:message-type event, or none) is its :event-type and its payload's text; an exception
// is {event: 'error'} with the union object {"<:exception-type>": payload} (a payload that is not
// a JSON object is its message), and an error message (:message-type error: :error-code and
// :error-message) {event: 'error'} with {"error": {"type", "message"}}.
export function messageEvent({ headers, payload }) {
  const text = utf8.decode(payload);
  const kind = headers[':message-type'] ?? 'event';
  if (kind === 'event') {
    const name = headers[':event-type'];
    if (typeof name !== 'string' || name === '') throw malformed('an event without :event-type');
    return { event: name, data: text };
  }
  if (kind === 'exception') {
    const name = headers[':exception-type'];
    let body = null;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: its text is its message
    }
    const type = typeof name === 'string' && name ? name : 'unknownException';
    return { event: 'error',
             data: JSON.stringify({ [type]: isObject(body) ? body : { message: text } }) };
  }
  if (kind === 'error') {
    const type = headers[':error-code'];
    const message = headers[':error-message'];
    return { event: 'error', data: JSON.stringify({ error: {
      type: typeof type === 'string' ? type : '',
      message: typeof message === 'string' ? message : text } }) };
  }
  return null;
}

// The events of an application/vnd.amazon.eventstream body (a ReadableStream of bytes, or any
// async iterable), as {event, data}; an unfinished last message is not one.
export async function* eventStreamEvents(body) {
  const decoder = new EventStreamDecoder();
  for await (const bytes of body) yield* decoder.push(bytes);
  decoder.finish();
}
