// The NDJSON framing of an application/x-ndjson body (Ollama's streams), read incrementally, as
// the reference client reads it (reference_impl/ndjson_decoder.cc): one JSON value per line, a
// line ends at LF, a CR before it is dropped, blank lines are skipped, and an unfinished last
// line when the body ends is discarded. NdjsonDecoder.push(bytes) returns the lines those bytes
// complete as {event: 'message', data: line}, the shape SseDecoder gives an SSE event, so that
// parseEvent and Output read both framings alike; finish() ends the body and returns how many
// bytes of an unfinished line it discarded. Whether a line is JSON, and of which shape, is the
// dialect's to say (parseEvent, Output).

const isBlank = (line) => /^[ \t\r]*$/.test(line);

export class NdjsonDecoder {
  #decoder = new TextDecoder();
  #partial = '';

  push(bytes) {
    const events = [];
    this.#partial += typeof bytes === 'string' ? bytes
      : this.#decoder.decode(bytes, { stream: true });
    let end;
    while ((end = this.#partial.indexOf('\n')) >= 0) {
      let line = this.#partial.slice(0, end);
      this.#partial = this.#partial.slice(end + 1);
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (!isBlank(line)) events.push({ event: 'message', data: line });
    }
    return events;
  }

  // The body ended: an unfinished last line is discarded (a cut stream); returns its bytes.
  finish() {
    this.#partial += this.#decoder.decode();
    const discarded = isBlank(this.#partial) ? 0 : Buffer.byteLength(this.#partial);
    this.#partial = '';
    return discarded;
  }
}

// The lines of an application/x-ndjson body (a ReadableStream of bytes, or any async iterable),
// as {event: 'message', data}; an unfinished last line is not one.
export async function* ndjsonEvents(body) {
  const decoder = new NdjsonDecoder();
  for await (const bytes of body) yield* decoder.push(bytes);
  decoder.finish();
}
