// aimock fixtures to cassettes (`faultline cassette import --aimock FILE`, docs/cassettes.md).
//
// aimock (npm @copilotkit/aimock, formerly llmock) answers every provider's endpoint from one
// fixture file, `{"fixtures": [{"match": {...}, "response": {...}, ...}]}`: a fixture has no
// dialect of its own, so the import renders each fixture in the dialect asked for
// (AimockOptions::dialect), the bytes aimock itself would stream for it there:
//   - text (`content`, a string or an object aimock stringifies) and tool calls (`toolCalls`,
//     arguments a string or an object), streamed as aimock's chunk builders do: the content and
//     each tool call's arguments sliced every `chunkSize` UTF-16 code units (default 20, aimock's),
//     OpenAI Chat `data: {...}` chunks and `data: [DONE]`, Anthropic `event:`/`data:` pairs;
//   - errors (`error` with a message, `status` default 500): aimock's JSON error body, with its
//     Retry-After and x-ratelimit-* headers on a 429.
// The overrides a fixture may give (id, created, model, finishReason, role, systemFingerprint,
// usage) are honoured; where aimock draws an id at random ("chatcmpl-" + 16 random characters)
// the import derives one of the same shape from the file and the fixture's index, and `created`
// is 1767225600 (2026-01-01) unless the fixture gives it, so an import is deterministic.
//
// Timing is aimock's calculateDelay before each chunk: `streamingProfile` (ttft, then 1000/tps
// ms; its random `jitter` is left out, so the mean), else `recordedTimings` (what aimock's
// recorder measured: ttftMs, then interChunkDelaysMs, their mean past the end), else `latency`
// per chunk; divided by `replaySpeed`. The head goes out with the first chunk (as Node sends it).
//
// Skipped with the reason: fixtures whose response is of another kind (embeddings, images,
// audio, ...), with content and tool calls together, `blocks`, `reasoning`, `webSearches` or
// redacted thinking, and fixtures with aimock's own faults (truncateAfterChunks,
// disconnectAfterMs, chaos): faultline's `content.end` and `faults` overlay those on the
// cassette instead. Dialects other than openai-chat and anthropic-messages: an error.
//
// Pure; thread-safe.
#pragma once

#include <expected>
#include <string_view>

#include "cassette_import/import.h"

namespace faultline::scenario {

struct AimockOptions {
  Dialect dialect = Dialect::kOpenAiChat;
  int chunk_size = 20;    // aimock's --chunk-size (a fixture's chunkSize wins)
  double latency_ms = 0;  // aimock's --latency (a fixture's latency wins)
  std::string model;      // the model of the request; "" = the dialect's default
};

std::expected<Import, LoadError> ImportAimock(std::string_view text, std::string_view file,
                                              const AimockOptions& aimock = {},
                                              const ImportOptions& options = {});

}  // namespace faultline::scenario
