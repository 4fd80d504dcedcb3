#include "scenarios/redact.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstddef>
#include <optional>

namespace faultline::scenario {
namespace {

constexpr std::size_t kNpos = std::string_view::npos;
// Bounds on every look-back and look-ahead, so that a hostile body costs one pass: names longer
// than this are not names, quoted secrets longer than that are not searched to their end.
constexpr std::size_t kMaxName = 128;
constexpr std::size_t kMaxQuoted = 64 * 1024;
constexpr std::size_t kMaxGap = 16;  // blanks around a JSON field's colon

bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool IsTokenChar(char c) { return IsAlnum(c) || c == '-' || c == '_'; }
bool IsNameChar(char c) { return IsTokenChar(c) || c == '.'; }
bool IsHeaderSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool IsQuote(char c) { return c == '"' || c == '\''; }
char Lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

std::string LowerCopy(std::string_view text) {
  std::string out(text);
  std::ranges::transform(out, out.begin(), Lower);
  return out;
}

// Where a value that follows its name ends: a separator of the syntax around it (a shell word, a
// query string, a JSON string, a header list).
bool EndsValue(char c) {
  return IsHeaderSpace(c) || std::string_view("&#;,\"'\\<>)]}").find(c) != kNpos;
}

// A half-open range of the text being redacted.
struct Span {
  std::size_t begin = 0;
  std::size_t end = 0;
};

// Where the next closing quote is, for positions that only grow: one scan of the text in all,
// however many quoted values are asked about (an unclosed quote must not cost a scan each).
class NextQuote {
 public:
  explicit NextQuote(std::string_view text) : text_(text) {}
  std::size_t From(char quote, std::size_t at) {
    Cache& cache = quote == '"' ? double_ : single_;
    if (!cache.searched || (cache.next != kNpos && cache.next < at)) {
      cache = {true, text_.find(quote, at)};
    }
    return cache.next;
  }

 private:
  struct Cache {
    bool searched = false;
    std::size_t next = kNpos;
  };
  std::string_view text_;
  Cache single_;
  Cache double_;
};

std::size_t SkipBlanks(std::string_view text, std::size_t at) {
  const std::size_t limit = std::min(text.size(), at + kMaxGap);
  while (at < limit && (text[at] == ' ' || text[at] == '\t')) ++at;
  return at;
}

std::size_t ValueEnd(std::string_view text, std::size_t at) {
  while (at < text.size() && !EndsValue(text[at])) ++at;
  return at;
}

// The name that ends just before `at`: a run of IsNameChar, empty when longer than kMaxName.
std::string_view NameBefore(std::string_view text, std::size_t at) {
  std::size_t begin = at;
  while (begin > 0 && IsNameChar(text[begin - 1])) {
    if (at - begin >= kMaxName) return {};
    --begin;
  }
  return text.substr(begin, at - begin);
}

// `NAME=value` (an assignment, a query parameter, `--token=value`): the value, unquoted.
std::optional<Span> AssignedValue(std::string_view text, std::size_t equals, NextQuote& quotes) {
  if (!SecretName(NameBefore(text, equals))) return std::nullopt;
  const std::size_t begin = equals + 1;
  if (begin < text.size() && IsQuote(text[begin])) {
    const std::size_t close = quotes.From(text[begin], begin + 1);
    if (close != kNpos) return Span{begin + 1, close};
  }
  return Span{begin, ValueEnd(text, begin)};
}

// The end of the JSON string whose contents start at `at` (its closing quote), honouring escapes.
std::optional<std::size_t> JsonStringEnd(std::string_view text, std::size_t at) {
  const std::size_t limit = std::min(text.size(), at + kMaxQuoted);
  for (std::size_t i = at; i < limit; ++i) {
    if (text[i] == '\\') {
      ++i;
    } else if (text[i] == '"') {
      return i;
    }
  }
  return std::nullopt;
}

// `"NAME": "value"` at any depth of a JSON document (or JSON-looking text): the string's contents.
// Values of other types (numbers, objects) are left alone; the fields inside an object are found
// on their own.
std::optional<Span> JsonFieldValue(std::string_view text, std::size_t colon) {
  std::size_t close = colon;
  while (close > 0 && colon - close < kMaxGap && IsHeaderSpace(text[close - 1])) --close;
  if (close == 0 || text[close - 1] != '"') return std::nullopt;
  const std::size_t name_end = close - 1;
  const std::size_t from = name_end - std::min(name_end, kMaxName + 1);
  std::size_t open = text.substr(from, name_end - from).rfind('"');
  if (open == kNpos) return std::nullopt;
  open += from;
  if (!SecretName(text.substr(open + 1, name_end - open - 1))) return std::nullopt;
  std::size_t value = colon + 1;
  while (value < text.size() && value - colon <= kMaxGap && IsHeaderSpace(text[value])) ++value;
  if (value >= text.size() || text[value] != '"') return std::nullopt;
  const std::optional<std::size_t> end = JsonStringEnd(text, value + 1);
  if (!end) return std::nullopt;
  return Span{value + 1, *end};
}

bool IsAuthScheme(std::string_view word) {
  const std::string lower = LowerCopy(word);
  return lower == "bearer" || lower == "basic" || lower == "token" || lower == "digest" ||
         lower == "apikey";
}

// `Name: value` as a header is printed, where Name is plainly a credential's: a secret name with
// '-' or '_' in it (X-Api-Key, api_key) or one that is nothing else (Authorization). Bare "key" or
// "token" are not enough ("Unexpected token: }"). The value runs to the end of its line or
// quoted string; an authentication scheme before it ("Bearer") is kept.
std::optional<Span> HeaderValue(std::string_view text, std::size_t colon) {
  std::size_t begin = colon;
  while (begin > 0 && colon - begin < kMaxName && IsTokenChar(text[begin - 1])) --begin;
  const std::string_view name = text.substr(begin, colon - begin);
  if (colon + 1 >= text.size() || (text[colon + 1] != ' ' && text[colon + 1] != '\t')) {
    return std::nullopt;
  }
  constexpr std::array<std::string_view, 6> kPlain = {"authorization", "authentication", "cookie",
                                                      "password",      "secret",         "apikey"};
  const bool plain = name.find_first_of("-_") != kNpos ||
                     std::ranges::find(kPlain, LowerCopy(name)) != kPlain.end();
  if (!plain || !SecretName(name)) return std::nullopt;
  std::size_t value = SkipBlanks(text, colon + 1);
  const std::size_t word_end = std::min(text.find_first_of(" \t\r\n\"'\\", value), text.size());
  if (IsAuthScheme(text.substr(value, word_end - value))) value = SkipBlanks(text, word_end);
  const std::size_t end = std::min(text.find_first_of("\r\n\"'\\", value), text.size());
  return Span{value, end};
}

// Rule 1: the userinfo of a URL (https://user:pass@host, https://TOKEN@host).
std::string RedactUserinfo(std::string_view text) {
  std::string out;
  std::size_t at = 0;
  for (std::size_t scheme = text.find("://"); scheme != kNpos; scheme = text.find("://", at)) {
    const std::size_t begin = scheme + 3;
    std::size_t end = begin;
    while (end < text.size() && !IsHeaderSpace(text[end]) &&
           std::string_view("/?#@\"'<>\\").find(text[end]) == kNpos) {
      ++end;
    }
    out += text.substr(at, begin - at);
    at = begin;
    if (end < text.size() && text[end] == '@' && end > begin) {
      out += kRedacted;
      at = end;
    }
  }
  out += text.substr(at);
  return out;
}

// Rule 2: values after a secret name and '=' or ':'.
std::string RedactNamedValues(std::string_view text) {
  std::string out;
  std::size_t copied = 0;  // text[0, copied) is in `out`
  std::size_t at = 0;
  NextQuote quotes(text);
  while ((at = text.find_first_of("=:", at)) != kNpos) {
    std::optional<Span> value;
    if (text[at] == '=') {
      value = AssignedValue(text, at, quotes);
    } else {
      value = JsonFieldValue(text, at);
      if (!value) value = HeaderValue(text, at);
    }
    // An empty value has nothing to hide, a redacted one nothing more (redacting is idempotent).
    if (!value || value->end <= value->begin ||
        text.substr(value->begin).starts_with(kRedacted.substr(0, kRedacted.size() - 1))) {
      ++at;
      continue;
    }
    out += text.substr(copied, value->begin - copied);
    out += kRedacted;
    copied = at = value->end;
  }
  out += text.substr(copied);
  return out;
}

// A flag whose value is a credential: --api-key, --token, --key, -k (not --token=X: rule 2).
bool SecretFlag(std::string_view word) {
  if (!word.starts_with('-') || word.find('=') != kNpos) return false;
  return word == "-k" || SecretName(word);
}

// Rule 3: the word after a secret flag or after "Bearer"; a quoted one to its closing quote.
std::string RedactFollowingWords(std::string_view text) {
  std::string out;
  bool redact_next = false;
  std::size_t at = 0;
  NextQuote quotes(text);
  while (at < text.size()) {
    if (IsHeaderSpace(text[at])) {
      out += text[at++];
      continue;
    }
    std::size_t end = std::min(text.find_first_of(" \t\r\n", at), text.size());
    const std::string_view word = text.substr(at, end - at);
    const bool quoted = IsQuote(word.front());
    std::size_t kept = at;  // text[kept, end) is copied as it is
    if (redact_next && !word.starts_with('-') && word != kRedacted) {
      const std::size_t close = quoted ? quotes.From(word.front(), at + 1) : kNpos;
      if (close != kNpos) {
        out += word.front();
        out += kRedacted;
        kept = close;
        end = std::max(end, std::min(text.find_first_of(" \t\r\n", close), text.size()));
      } else if (const std::size_t value_end = ValueEnd(text, at); value_end > at) {
        out += kRedacted;
        kept = value_end;
      }
    }
    out += text.substr(kept, end - kept);
    redact_next = SecretFlag(word) || LowerCopy(word.substr(quoted ? 1 : 0)) == "bearer";
    at = end;
  }
  return out;
}

// Rule 4: tokens shaped like provider keys, JWTs with all their segments.
std::string RedactKeyShapes(std::string_view text) {
  std::string out;
  std::size_t copied = 0;
  std::size_t at = 0;
  while (at < text.size()) {
    if (!IsTokenChar(text[at])) {
      ++at;
      continue;
    }
    std::size_t end = at;
    while (end < text.size() && IsTokenChar(text[end])) ++end;
    const std::string_view token = text.substr(at, end - at);
    if (KeyShaped(token)) {
      if (token.starts_with("eyJ")) {
        while (end + 1 < text.size() && text[end] == '.' && IsTokenChar(text[end + 1])) {
          for (++end; end < text.size() && IsTokenChar(text[end]);) ++end;
        }
      }
      out += text.substr(copied, at - copied);
      out += kRedacted;
      copied = end;
    }
    at = end;
  }
  out += text.substr(copied);
  return out;
}

}  // namespace

bool SecretName(std::string_view name) {
  if (name.empty() || name.size() > kMaxName) return false;
  std::string normal;  // lower case, punctuation as '_', trimmed: "--API-Key" -> "api_key"
  for (const char c : name) normal += IsAlnum(c) ? Lower(c) : '_';
  const std::size_t first = normal.find_first_not_of('_');
  if (first == kNpos) return false;
  normal = normal.substr(first, normal.find_last_not_of('_') - first + 1);
  for (std::string_view identifier : {"idempotency_key", "prompt_cache_key", "cache_key"}) {
    if (normal == identifier) return false;
  }
  for (std::string_view part :
       {"secret", "password", "passwd", "apikey", "accesskey", "authtoken"}) {
    if (normal.find(part) != kNpos) return true;
  }
  constexpr std::array<std::string_view, 14> kWords = {
      "key",       "token",  "auth",       "authorization", "authentication",
      "signature", "sig",    "credential", "credentials",   "cookie",
      "pwd",       "bearer", "jwt",        "keys"};
  std::string word;
  const auto secret_word = [&] { return std::ranges::find(kWords, word) != kWords.end(); };
  for (std::size_t i = 0; i < name.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    const bool camel_boundary =
        i > 0 && std::isupper(c) && std::islower(static_cast<unsigned char>(name[i - 1]));
    if (!IsAlnum(name[i]) || camel_boundary) {
      if (secret_word()) return true;
      word.clear();
    }
    if (IsAlnum(name[i])) word += Lower(name[i]);
  }
  return secret_word();
}

bool KeyShaped(std::string_view token) {
  struct Shape {
    std::string_view prefix;
    std::size_t min_size;
  };
  constexpr std::array<Shape, 18> kShapes = {{
      {"sk-", 12},
      {"sk_", 12},
      {"pk-", 12},
      {"pk_", 12},
      {"rk_", 16},
      {"hf_", 12},
      {"AIza", 30},
      {"xai-", 16},
      {"gsk_", 16},
      {"ghp_", 20},
      {"gho_", 20},
      {"ghs_", 20},
      {"ghu_", 20},
      {"github_pat_", 20},
      {"glpat-", 20},
      {"xoxb-", 15},
      {"xoxp-", 15},
      {"eyJ", 16},
  }};
  for (const Shape& shape : kShapes) {
    if (token.starts_with(shape.prefix) && token.size() >= shape.min_size) return true;
  }
  // AWS access key ids: AKIA (long-term) or ASIA (temporary) and 16 capitals or digits.
  return token.size() == 20 && (token.starts_with("AKIA") || token.starts_with("ASIA")) &&
         std::ranges::all_of(token, [](char c) {
           return std::isupper(static_cast<unsigned char>(c)) ||
                  std::isdigit(static_cast<unsigned char>(c));
         });
}

std::string CutForRedaction(std::string text, std::size_t max) {
  if (text.size() <= max) return text;
  constexpr std::string_view kCut = "[…]";
  constexpr std::string_view kSpaces = " \t\r\n";
  const std::size_t cut = text.size() - max;
  if (kSpaces.find(text[cut - 1]) != std::string_view::npos) return text.substr(cut);
  const std::size_t space = text.find_first_of(kSpaces, cut);
  if (space == std::string::npos) return std::string(kCut);
  return std::string(kCut) + text.substr(space);
}

std::string RedactSecrets(std::string_view text) {
  return RedactKeyShapes(RedactFollowingWords(RedactNamedValues(RedactUserinfo(text))));
}

}  // namespace faultline::scenario
