// The legend under each timeline and the colours of the bound bands. Every band kind the picture
// draws has an entry in its colour, and no band shares a colour with a lane or a client marker:
// the backoff window used to be the blue of "client closed", and read as one.
#include <set>
#include <string>

#include "fmt/format.h"
#include "reports/timeline.h"
#include "reports/timeline_layout.h"

namespace faultline::report::internal {
namespace {

// What a band of each kind means, in the legend's words.
std::string_view BoundName(std::string_view kind) {
  if (kind == "retry-after") return "Retry-After floor";
  if (kind == "backoff") return "backoff window";
  if (kind == "idle") return "idle timeout";
  if (kind == "headers") return "headers timeout";
  if (kind == "deadline") return "total deadline";
  return kind;
}

void WriteRequestSwatches(std::ostream& out) {
  struct Swatch {
    std::string_view end;
    int status;
    std::string_view text;
  };
  constexpr Swatch kSwatches[] = {{"completed", 200, "completed"},
                                  {"completed", 429, "error status sent"},
                                  {"closed-by-server", 0, "closed by server"},
                                  {"reset-by-server", 0, "reset by server"},
                                  {"client-closed", 0, "client closed"},
                                  {"stalled-client-gave-up", 0, "client gave up"},
                                  {"in-progress", 0, "still open"},
                                  {"write-failed", 0, "other"}};
  out << R"(<span class="legend-title">Requests:</span>)";
  for (const Swatch& swatch : kSwatches) {
    out << fmt::format(R"(<span><i class="swatch" style="background:{}"></i>{}</span>)",
                       LaneColor(swatch.end, swatch.status), swatch.text);
  }
  out << R"(<span><i class="swatch hatch"></i>stall</span>)";
}

void WriteClientMarkers(std::ostream& out) {
  out << R"(<span class="legend-title">Client:</span>)"
      << fmt::format(R"(<span><b style="color:{}">▶</b> start</span>)", kStartColor)
      << R"(<span><b style="color:#777">|</b> chunk</span>)"
      << fmt::format(
             R"(<span><b style="color:{0}">✕</b> interrupted, <b style="color:{0}">⊔</b> scheduled retry</span>)",
             kInterruptColor)
      << fmt::format(R"(<span><b style="color:{}">●</b> committed</span>)", kCommitColor)
      << fmt::format(R"(<span><b style="color:{}">●</b> failed</span>)", kFailColor)
      << R"(<span><b>┆</b> cancel</span>)";
}

// The kinds of the bounds the picture draws, in the legend's fixed order, then any other.
void WriteBoundSwatches(const Timeline& timeline, std::ostream& out) {
  std::set<std::string_view> kinds;
  for (const TimelineBound& bound : timeline.bounds) {
    if (BoundIsDrawn(timeline, bound)) kinds.insert(bound.kind);
  }
  if (kinds.empty()) return;
  out << R"(<span class="legend-title">Bounds:</span>)";
  const auto entry = [&](std::string_view kind) {
    // The deadline is a dashed line across the lanes, the others a band on an attempt's lane.
    const std::string_view shape = kind == "deadline" ? "swatch line" : "swatch band";
    out << fmt::format(R"(<span><i class="{}" style="--c:{}"></i>{}</span>)", shape,
                       BoundColor(kind), BoundName(kind));
  };
  for (const std::string_view kind : {"retry-after", "backoff", "idle", "headers", "deadline"}) {
    if (kinds.erase(kind) > 0) entry(kind);
  }
  for (const std::string_view kind : kinds) entry(kind);
  out << R"(<span><b>│</b> mark inside its band, <b style="color:#c62828">┃</b> outside</span>)";
}

}  // namespace

std::string_view BoundColor(std::string_view kind) {
  if (kind == "retry-after") return "#0f9fb5";  // cyan
  if (kind == "backoff") return "#d6336c";      // magenta: not a lane's blue
  if (kind == "deadline") return "#5f6670";     // grey, as the axis
  return "#a08a00";                             // olive: idle, headers
}

void RenderTimelineLegend(const Timeline& timeline, std::ostream& out) {
  out << R"(<div class="legend">)";
  WriteRequestSwatches(out);
  WriteClientMarkers(out);
  WriteBoundSwatches(timeline, out);
  out << "</div>";
}

}  // namespace faultline::report::internal
