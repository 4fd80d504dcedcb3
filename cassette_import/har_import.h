// HAR 1.2 to cassettes (`faultline cassette import --har FILE`, docs/cassettes.md): the HTTP
// archive that browsers' DevTools (Chrome, Firefox) and Microsoft Dev Proxy export.
//
// Every entry whose request speaks a dialect (POST to a path the fake provider serves, by its
// own table: provider::DialectOfTarget) becomes a cassette; the others are skipped with the
// reason. The rules:
//   - The request: method, the URL's path and query (the target), its headers and
//     postData.text, with credentials redacted as `faultline proxy --record` redacts them.
//   - The response: status, statusText, headers (HTTP/2 pseudo-headers such as ":status" and the
//     framing ones dropped: content.text is the decoded body, so content-length,
//     content-encoding and transfer-encoding no longer describe it; a body of one write gets
//     content-length, a longer one transfer-encoding: chunked) and content.text, decoded from
//     base64 when content.encoding says so (Bedrock's binary event stream).
//   - Timing: HAR has none per chunk. The head comes at timings.wait (the time to first byte);
//     the body is cut into its events with the reference client's decoders (one write per
//     event) and the writes are spread evenly over timings.receive, the last at wait + receive.
//   - Skipped with the reason: a request no dialect speaks; an aborted one (status 0); one whose
//     body cannot be replayed as recorded: no content.text (DevTools leaves some bodies out), a
//     content.encoding other than base64, or a text shorter than content.size (truncated).
//   - An error (the import stops, naming the JSON path): what is not HAR (no log.entries, a
//     field of the wrong type), base64 that does not decode, a status outside 0 and 100-599, a
//     header with a line break, and no entry that converts.
//   - Fields whose name starts with '_' (vendors' own: Chrome's _initiator, _resourceType, ...)
//     and every field not named here are ignored; entries keep the file's order.
//
// Pure; thread-safe.
#pragma once

#include <expected>
#include <string_view>

#include "cassette_import/import.h"

namespace faultline::scenario {

std::expected<Import, LoadError> ImportHar(std::string_view text, std::string_view file,
                                           const ImportOptions& options = {});

}  // namespace faultline::scenario
