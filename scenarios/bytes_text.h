// Bytes as JSON text: the one home of the checks and codings that let a JSON document carry any
// bytes (the journals' bodies, a cassette's writes): valid UTF-8 goes as a string, anything else
// (Bedrock's binary event stream, a gzip body) as base64.
//
// It lives in the scenarios library because that is the lowest library the fake provider, the
// proxy and the cassette reader all link. Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace faultline::scenario {

// Whether `text` is well-formed UTF-8 (no overlongs, surrogates or code points above U+10FFFF).
bool IsValidUtf8(std::string_view text);

// RFC 4648 base64 with padding.
std::string Base64Encode(std::string_view bytes);
// The bytes of RFC 4648 base64 (padding required, no whitespace); nullopt for anything else.
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace faultline::scenario
