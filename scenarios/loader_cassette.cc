// Reading a response entry that plays a cassette back: `cassette: FILE`, `time_scale`, and the
// faults overlaid on the recording. The recording is the answer, so the keys that would write
// one (status, error, body, headers, content.text, ...) are refused: they would be ignored.
#include <algorithm>

#include "fmt/format.h"
#include "scenarios/loader_internal.h"
#include "scenarios/loader_keys.h"

namespace faultline::scenario::internal {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kCassetteResponseKeys[] = {"repeat",     "headers_delay", "cassette",
                                                      "time_scale", "content",       "stream"};

template <typename List>
bool Contains(const List& list, std::string_view key) {
  return std::ranges::find(list, key) != std::end(list);
}

// A cassette named by a scenario is found beside it, as a path in a scenario is read by people.
fs::path Resolve(const std::string& scenario_file, const std::string& name) {
  const fs::path path(name);
  if (path.is_absolute() || scenario_file.empty()) return path;
  return fs::path(scenario_file).parent_path() / path;
}

void CheckOverlay(Reader& reader, const Map& response, Dialect dialect, Content* out) {
  std::optional<OverlayContent> content =
      ReadOverlayContent(reader, response, "cassette", "content on a cassette");
  if (!content || !reader.ok()) return;
  const Map* map = &content->map;
  ReadContent(reader, content->field, dialect, out);
  if (!reader.ok()) return;
  for (const EventFault& fault : out->faults) {
    const bool supported =
        fault.kind == EventFault::Kind::kDelay || fault.kind == EventFault::Kind::kRaw ||
        (fault.kind == EventFault::Kind::kStall && fault.heartbeat.every.count() == 0);
    if (!supported) {
      reader.Fail(*map->Get("faults"),
                  fmt::format("a cassette takes delay, stall (without heartbeat) and raw faults; "
                              "'{}' is not played over a recording yet",
                              ToString(fault.kind)));
      return;
    }
  }
  if (out->end.heartbeat.every.count() > 0) {
    reader.Fail(*map->Get("end"), "a stall over a cassette sends nothing: no heartbeat");
  } else if (out->end.kind == Termination::Kind::kDone && out->end.after_event) {
    reader.Fail(*map->Get("end"),
                "end: done after event N on a cassette would leave the recording's middle out; "
                "cut it with no_terminator, close, reset, no_final_chunk or stall");
  }
}

}  // namespace

void ReadCassetteEntry(Reader& reader, const Map& map, Dialect dialect, ResponseSpec* out) {
  for (std::string_view key : keys::kResponse) {
    if (Contains(kCassetteResponseKeys, key)) continue;
    RejectKey(reader, map, key,
              fmt::format("'{}' is the cassette's to say: a cassette entry takes repeat, "
                          "headers_delay, time_scale and content (faults and end)",
                          key));
  }
  reader.Get(map, "repeat", &out->repeat, 0, 1'000'000);
  reader.Get(map, "headers_delay", &out->headers_delay);
  CassetteReplay replay;
  if (std::optional<Field> scale = reader.Present(map, "time_scale")) {
    replay.time_scale = reader.ReadNumber(*scale, 0.0, 1000.0).value_or(1.0);
  }
  const std::optional<Field> field = reader.Present(map, "cassette");
  if (!field) return;
  const std::optional<std::string> name = reader.ReadString(*field);
  if (!name || !reader.ok()) return;
  const fs::path path = Resolve(reader.file(), *name);
  std::expected<std::string, LoadError> text = ReadFile(path);
  if (!text) {
    reader.Fail(*field, fmt::format("cannot read the cassette {}: {}", path.string(),
                                    text.error().message));
    return;
  }
  std::expected<Cassette, LoadError> cassette = ParseCassette(*text, path.string());
  if (!cassette) {
    reader.Fail(*field, fmt::format("the cassette is not valid: {}", cassette.error().ToString()));
    return;
  }
  if (!cassette->dialect.empty() && cassette->dialect != ToString(dialect)) {
    reader.Fail(*field, fmt::format("the cassette was recorded in {}, the scenario speaks {}",
                                    cassette->dialect, ToString(dialect)));
    return;
  }
  out->status = cassette->status;
  replay.file = *name;
  replay.cassette = std::move(*cassette);
  out->cassette = std::move(replay);
  CheckOverlay(reader, map, dialect, &out->content);
}

}  // namespace faultline::scenario::internal
