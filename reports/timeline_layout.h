// Layout shared by the two halves of the timeline SVG (timeline_svg.cc draws the request lanes and
// the axis, timeline_client_svg.cc the client lane): sizes in viewBox units, the time scale, and
// a helper that keeps labels from overlapping. Internal to reports/. Values only.
#pragma once

#include <algorithm>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fmt/format.h"

namespace faultline::report::internal {

inline constexpr double kSvgWidth = 1000;
inline constexpr double kPlotLeft = 150;     // lane labels to the left
inline constexpr double kPlotRight = 60;     // room for the last byte count
inline constexpr double kClientHeight = 92;  // two rows of labels, two of markers, retries
inline constexpr double kLaneHeight = 38;
inline constexpr double kBarHeight = 24;
inline constexpr double kAxisHeight = 26;
inline constexpr double kCharWidth = 6.3;  // average character width at font-size 11

// The client markers' colours (the legend names them).
inline constexpr std::string_view kStartColor = "#1f6feb";
inline constexpr std::string_view kInterruptColor = "#e67700";
inline constexpr std::string_view kCommitColor = "#2e9e5b";
inline constexpr std::string_view kFailColor = "#c62828";

struct Geometry {
  double span = 1;  // ms at the right edge of the plot
  double client_top = 4;
  double lanes_top = 4 + kClientHeight;
  double lanes_bottom = 0;
  double height = 0;
  double X(double t_ms) const {
    return kPlotLeft + std::clamp(t_ms, 0.0, span) / span * (kSvgWidth - kPlotLeft - kPlotRight);
  }
};

inline double TextWidth(std::string_view text) {
  // Counts code points, not bytes: labels carry "·" and "…".
  const auto continuation = std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
  });
  return static_cast<double>(text.size() - static_cast<std::size_t>(continuation)) * kCharWidth;
}

// Places labels in a few rows so that neighbours do not overlap, whatever the order of placing.
class LabelRows {
 public:
  explicit LabelRows(int rows) : taken_(static_cast<std::size_t>(rows)) {}
  // The first row where [x, x + width) is free (then taken), or -1 when every row is taken there.
  int Place(double x, double width) {
    const double end = x + width + 6;
    for (std::size_t row = 0; row < taken_.size(); ++row) {
      const bool free = std::none_of(taken_[row].begin(), taken_[row].end(), [&](const auto& span) {
        return x < span.second && span.first < end;
      });
      if (free) {
        taken_[row].emplace_back(x, end);
        return static_cast<int>(row);
      }
    }
    return -1;
  }

 private:
  std::vector<std::vector<std::pair<double, double>>> taken_;  // per row: [from, to)
};

template <typename... Args>
void Emit(std::string& svg, fmt::format_string<Args...> format, Args&&... args) {
  fmt::format_to(std::back_inserter(svg), format, std::forward<Args>(args)...);
}

// timeline_client_svg.cc: the client lane (above the request lanes) and the cancel line.
struct Timeline;
void DrawClientLane(const Timeline& timeline, const Geometry& g, std::string& svg);

// timeline_calls_svg.cc: with several calls, one lane per call (lanes_top down, kCallLaneHeight
// each) instead of the client lane and a lane per request.
inline constexpr double kCallLaneHeight = 22;
void DrawCallLanes(const Timeline& timeline, const Geometry& g, std::string& svg);

// timeline_calls_svg.cc: every bound as a band on its attempt's lane (`lane_top` gives the top
// of that lane, or nullopt when it has none), with its mark inside or outside.
struct TimelineBound;
void DrawBounds(const Timeline& timeline, const Geometry& g,
                const std::function<std::optional<double>(int attempt)>& lane_top,
                double lane_height, std::string& svg);

// timeline_svg.cc: whether the picture draws `bound`, the one rule the drawing and its legend
// follow (a legend entry for a band nobody can see is noise). With several calls, a call's lane
// shows its bounds but a deadline it kept to; with one, a band is drawn on its attempt's lane when
// that lane is there, and a deadline when it falls on the axis.
bool BoundIsDrawn(const Timeline& timeline, const TimelineBound& bound);

}  // namespace faultline::report::internal
