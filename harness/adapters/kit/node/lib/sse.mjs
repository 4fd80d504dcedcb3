// The SSE framing of a text/event-stream body, read incrementally: SseDecoder.push(bytes)
// returns the events those bytes complete, as {event, data}, with CR, LF and CRLF line ends,
// comments, multi-line data and a leading BOM handled. Both the Wire (which watches a body for
// error events as it passes) and the adapters' own readers (sseEvents) frame with it.
import { awsException } from './classify.mjs';

export class SseDecoder {
  #decoder = new TextDecoder();
  #buffer = '';
  #skipLf = false;  // the buffer ended with a CR: a LF that comes next belongs to it
  #event = '';
  #data = [];
  #first = true;

  push(bytes) {
    const events = [];
    this.#buffer += this.#decoder.decode(bytes, { stream: true });
    if (this.#skipLf && this.#buffer.startsWith('\n')) this.#buffer = this.#buffer.slice(1);
    this.#skipLf = false;
    if (this.#first && this.#buffer.length > 0) {
      this.#buffer = this.#buffer.replace(/^\uFEFF/, '');
      this.#first = false;
    }
    let end;
    while ((end = this.#buffer.search(/[\r\n]/)) >= 0) {
      const line = this.#buffer.slice(0, end);
      const crlf = this.#buffer.startsWith('\r\n', end);
      this.#skipLf = this.#buffer[end] === '\r' && end === this.#buffer.length - 1;
      this.#buffer = this.#buffer.slice(end + (crlf ? 2 : 1));
      if (line === '') {
        if (this.#data.length) {
          events.push({ event: this.#event || 'message', data: this.#data.join('\n') });
        }
        this.#event = '';
        this.#data = [];
      } else if (!line.startsWith(':')) {
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') this.#data.push(value);
        else if (field === 'event') this.#event = value;
      }
    }
    return events;
  }
}

// The events of a text/event-stream body (a ReadableStream of bytes, or any async iterable).
export async function* sseEvents(body) {
  const decoder = new SseDecoder();
  for await (const bytes of body) yield* decoder.push(bytes);
}

// Whether a dialect's event object (parsed data) reports a provider error: Anthropic's and the
// Responses API's `error`, a Responses `response.failed`, or OpenAI Chat's and Gemini's bare
// {"error": {...}} (Gemini's a google.rpc.Status). An Ollama line (`dialect` 'ollama') is an
// error whenever it has an `error`, most often a bare string: {"error":"text"}. A Bedrock event
// (the AWS SDKs' union object) is one when it names an exception ({"throttlingException":
// {...}}) or is an event stream error message ({"error": {...}}).
export const isErrorEvent = (obj, dialect = null) => {
  if (dialect === 'ollama') return obj.error !== undefined && obj.error !== null;
  if (dialect === 'bedrock-converse') {
    return awsException(obj) !== null || (obj.error !== null && typeof obj.error === 'object');
  }
  return obj.type === 'error' || obj.type === 'response.failed' ||
    (obj.error !== null && typeof obj.error === 'object' && obj.type === undefined);
};
