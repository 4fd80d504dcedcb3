// The timeline model read from a trace, and the SVG drawn from it.
#include "reports/timeline.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include "fmt/format.h"
#include "reports/tests/test_results.h"
#include "reports/timeline_layout.h"

namespace faultline::report::internal {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

const json kTrace = json::parse(R"({
  "client": [
    {"t_ms": 5046.0, "call": 0, "event": {"type": "response/interrupted", "attempt": 1,
      "failure": {"code": "TIMEOUT", "class": "timeout"}, "scheduled_retry_ms": 450,
      "delay_source": "backoff"}},
    {"t_ms": 0.2, "call": 0, "event": {"type": "response/start", "attempt": 1}},
    {"t_ms": 5497.0, "call": 0, "event": {"type": "response/start", "attempt": 2}},
    {"t_ms": 5600.0, "call": 0, "event": {"type": "response/committed", "text": "x"}}],
  "journal": [
    {"index": 0, "attempt": 1, "arrived_ms": 0.5, "status": 200, "plan": "stall",
     "bytes_sent": 300, "end": "stalled-client-gave-up", "ended_ms": 5046.5,
     "writes": [{"t_ms": 1.0, "bytes": 100}, {"t_ms": 16.0, "bytes": 100},
                {"t_ms": 31.0, "bytes": 100}]},
    {"index": 1, "attempt": 2, "arrived_ms": 5497.3, "status": 200, "end": "in-progress",
     "writes": [{"t_ms": 5498.0, "bytes": 50}]}],
  "cancel_ms": 5800.0})");

TEST(Timeline, ReadsLanesWritesAndStalls) {
  const Timeline timeline = BuildTimeline(kTrace);
  ASSERT_EQ(timeline.lanes.size(), 2u);
  const TimelineLane& first = timeline.lanes[0];
  EXPECT_EQ(first.attempt, 1);
  EXPECT_EQ(first.status, 200);
  EXPECT_EQ(first.end, "stalled-client-gave-up");
  ASSERT_EQ(first.writes.size(), 3u);
  EXPECT_EQ(first.writes[2].cumulative_bytes, 300u);
  ASSERT_EQ(first.stalls.size(), 1u) << "15-ms gaps are not stalls; 5 s of silence is";
  EXPECT_EQ(first.stalls[0].from_ms, 31.0);
  EXPECT_EQ(first.stalls[0].to_ms, 5046.5);
  const TimelineLane& second = timeline.lanes[1];
  EXPECT_FALSE(second.ended_ms.has_value());
  EXPECT_EQ(second.bytes_sent, 50u) << "summed from the writes when bytes_sent is absent";
  // Still open: silent from its last write to the end of the picture (the cancel at 5800).
  ASSERT_EQ(second.stalls.size(), 1u);
  EXPECT_EQ(second.stalls[0].to_ms, 5800.0);
  EXPECT_EQ(timeline.end_ms, 5800.0);
}

TEST(Timeline, ReadsClientEventsInTimeOrder) {
  const Timeline timeline = BuildTimeline(kTrace);
  ASSERT_EQ(timeline.client.size(), 4u);
  EXPECT_EQ(timeline.client[0].type, "response/start");
  EXPECT_EQ(timeline.client[1].type, "response/interrupted");
  EXPECT_EQ(timeline.client[1].failure_code, "TIMEOUT");
  EXPECT_EQ(timeline.client[1].scheduled_retry_ms, 450.0);
  EXPECT_EQ(timeline.client[1].delay_source, "backoff");
  EXPECT_EQ(timeline.cancel_ms, 5800.0);
}

TEST(Timeline, RunEndBoundsOpenLanes) {
  json trace = kTrace;
  trace["ended_ms"] = 9000.0;
  const Timeline timeline = BuildTimeline(trace);
  EXPECT_EQ(timeline.end_ms, 9000.0);
  EXPECT_EQ(timeline.lanes[1].stalls.back().to_ms, 9000.0);
  EXPECT_EQ(timeline.lanes[0].stalls.back().to_ms, 5046.5) << "an ended lane keeps its end";
}

TEST(Timeline, StallThresholdIsAParameter) {
  EXPECT_EQ(BuildTimeline(kTrace, 10).lanes[0].stalls.size(), 3u);
  EXPECT_EQ(BuildTimeline(kTrace, 1e9).lanes[0].stalls.size(), 0u);
}

TEST(Timeline, ToleratesGarbage) {
  for (const char* text : {"null", "[]", "\"x\"", "{}", R"({"client": 5, "journal": "x"})",
                           R"({"client": [1, {"t_ms": "x"}, {"t_ms": 1}, {"t_ms": 1, "event": 3}],
            "journal": [null, {"arrived_ms": "soon", "writes": [{"bytes": 5}, 7]}]})"}) {
    const Timeline timeline = BuildTimeline(json::parse(text));
    EXPECT_TRUE(timeline.client.empty()) << text;
    std::ostringstream out;
    RenderTimelineSvg(timeline, "t", "t0", out);
    EXPECT_TRUE(testing::CheckXml(out.str()).ok) << text;
  }
  const Timeline odd =
      BuildTimeline(json::parse(R"({"journal": [{"writes": [{"t_ms": 3, "bytes": -5}]}]})"));
  ASSERT_EQ(odd.lanes.size(), 1u);
  EXPECT_EQ(odd.lanes[0].end, "in-progress");
  EXPECT_EQ(odd.lanes[0].writes[0].cumulative_bytes, 0u);
}

std::string Svg(const json& trace) {
  std::ostringstream out;
  RenderTimelineSvg(BuildTimeline(trace), "timeline of <x>", "s7", out);
  return out.str();
}

TEST(TimelineSvg, DrawsEveryPiece) {
  const std::string svg = Svg(kTrace);
  const testing::XmlCheck check = testing::CheckXml(svg);
  ASSERT_TRUE(check.ok) << check.error;
  EXPECT_EQ(check.elements.at("svg"), 1);
  EXPECT_THAT(svg, HasSubstr(R"(aria-label="timeline of &lt;x&gt;")"));
  EXPECT_THAT(svg, HasSubstr(R"(<pattern id="s7-stall")")) << "ids derive from the given id";
  EXPECT_EQ(testing::CountOccurrences(svg, "class=\"lane\""), 2);
  EXPECT_EQ(testing::CountOccurrences(svg, "class=\"start\""), 2);
  EXPECT_EQ(testing::CountOccurrences(svg, "class=\"cross\""), 1);
  EXPECT_THAT(svg, HasSubstr("class=\"bracket\""));
  EXPECT_THAT(svg, HasSubstr("backoff 450 ms"));
  EXPECT_THAT(svg, HasSubstr("class=\"cancel\""));
  EXPECT_THAT(svg, HasSubstr("class=\"terminal\" fill=\"#2e9e5b\""));
  EXPECT_THAT(svg, HasSubstr("stall 5.02 s"));
  EXPECT_THAT(svg, HasSubstr("class=\"bar open\"")) << "the in-progress lane";
  EXPECT_THAT(svg, HasSubstr("class=\"bytes\"")) << "cumulative bytes step line";
  EXPECT_THAT(svg, HasSubstr(">0 s</text>"));
  EXPECT_THAT(svg, HasSubstr(">5 s</text>"));
}

TEST(TimelineSvg, FailedTerminalIsRedWithItsCode) {
  const json trace = json::parse(R"({"client": [
      {"t_ms": 0, "event": {"type": "response/start", "attempt": 1}},
      {"t_ms": 40, "event": {"type": "response/failed", "failure": {"code": "STREAM_TRUNCATED"}}}]})");
  const std::string svg = Svg(trace);
  EXPECT_THAT(svg, HasSubstr("class=\"terminal\" fill=\"#c62828\""));
  EXPECT_THAT(svg, HasSubstr("failed STREAM_TRUNCATED"));
  EXPECT_THAT(svg, HasSubstr(">40 ms</text>")) << "short runs keep a millisecond axis";
  EXPECT_THAT(svg, Not(HasSubstr("class=\"bracket\"")));
}

TEST(TimelineSvg, ManyChunksStayCompact) {
  json trace = {{"client", json::array()}};
  for (int i = 0; i < 20000; ++i) {
    trace["client"].push_back({{"t_ms", i * 0.05}, {"event", {{"type", "assistant/chunk"}}}});
  }
  const std::string svg = Svg(trace);
  EXPECT_LT(svg.size(), 40000u) << "chunks closer than half a unit share one tick";
}

// Fifty calls at once, each retrying once: fifty lanes, never one per request.
TEST(TimelineSvg, SeveralCallsDrawOneLaneEachWithTheirRequests) {
  json trace = {{"calls", 50}, {"client", json::array()}, {"journal", json::array()}};
  for (int call = 0; call < 50; ++call) {
    const double t = call * 10.0;
    trace["client"].push_back(
        {{"t_ms", t}, {"call", call}, {"event", {{"type", "response/start"}, {"attempt", 1}}}});
    trace["client"].push_back({{"t_ms", t + 1000 + call},
                               {"call", call},
                               {"event", {{"type", "response/start"}, {"attempt", 2}}}});
    trace["client"].push_back({{"t_ms", t + 1100 + call},
                               {"call", call},
                               {"event", {{"type", "response/committed"}, {"text", "x"}}}});
  }
  for (int call = 0; call < 50; ++call) {
    const double t = call * 10.0;
    for (const auto& [attempt, arrived, status] :
         {std::tuple{1, t + 0.5, 429}, std::tuple{2, t + 1000.5 + call, 200}}) {
      trace["journal"].push_back({{"index", trace["journal"].size()},
                                  {"attempt", attempt},
                                  {"arrived_ms", arrived},
                                  {"status", status},
                                  {"end", "completed"},
                                  {"ended_ms", arrived + 20}});
    }
  }
  const Timeline timeline = BuildTimeline(trace);
  EXPECT_EQ(timeline.calls, 50);
  int attributed_to_7 = 0;
  for (const TimelineLane& lane : timeline.lanes) attributed_to_7 += lane.call == 7 ? 1 : 0;
  EXPECT_EQ(attributed_to_7, 2) << "each call's start answers one request";
  const std::string svg = Svg(trace);
  ASSERT_TRUE(testing::CheckXml(svg).ok) << testing::CheckXml(svg).error;
  EXPECT_EQ(testing::CountOccurrences(svg, R"(<text class="lane-name")"), 50) << "a lane per call";
  EXPECT_EQ(testing::CountOccurrences(svg, R"(<rect class="bar")"), 100) << "every request";
  EXPECT_THAT(svg, HasSubstr(">call 49</text>"));
  EXPECT_THAT(svg, Not(HasSubstr(">attempt 1 · 429</text>"))) << "no lane per request";
  EXPECT_THAT(svg, HasSubstr(R"(viewBox="0 0 1000 1130")")) << "50 x 22 + the axis";
}

// A journal that records each request's call is drawn as it says, even where the order of the
// client's starts would suggest otherwise.
TEST(TimelineSvg, TheJournalsCallWinsOverTheOrderOfStarts) {
  json trace = {{"calls", 2}, {"client", json::array()}, {"journal", json::array()}};
  for (int call = 0; call < 2; ++call) {
    trace["client"].push_back({{"t_ms", 1.0 * call},
                               {"call", call},
                               {"event", {{"type", "response/start"}, {"attempt", 1}}}});
  }
  // Call 1's request overtook call 0's on the way to the provider.
  for (const auto& [call, arrived] : {std::pair{1, 2.0}, std::pair{0, 3.0}}) {
    trace["journal"].push_back({{"index", trace["journal"].size()},
                                {"attempt", trace["journal"].size() + 1},
                                {"call", call},
                                {"arrived_ms", arrived},
                                {"status", 200},
                                {"end", "completed"},
                                {"ended_ms", arrived + 5}});
  }
  const Timeline timeline = BuildTimeline(trace);
  ASSERT_EQ(timeline.lanes.size(), 2u);
  EXPECT_EQ(timeline.lanes[0].call, 1);
  EXPECT_EQ(timeline.lanes[1].call, 0);
}

// With several calls, each call's bounds are drawn in its lane; a kept deadline is not drawn.
TEST(TimelineSvg, SeveralCallsDrawTheirBoundsInTheirLanes) {
  json trace = {{"calls", 2}, {"client", json::array()}, {"journal", json::array()}};
  trace["bounds"] = json::parse(R"([
    {"kind": "retry-after", "attempt": 3, "call": 1, "from_ms": 1000, "mark_ms": 120,
     "inside": false, "label": "Retry-After floor 1000 ms"},
    {"kind": "deadline", "attempt": 0, "call": 0, "from_ms": 0, "to_ms": 5000, "mark_ms": 130,
     "inside": true, "label": "total deadline 5000 ms"}])");
  for (const int call : {0, 1}) {
    trace["journal"].push_back({{"index", call},
                                {"attempt", call + 1},
                                {"call", call},
                                {"arrived_ms", 10 * call},
                                {"status", 429},
                                {"end", "completed"},
                                {"ended_ms", 10 * call + 5}});
  }
  const Timeline timeline = BuildTimeline(trace);
  ASSERT_EQ(timeline.bounds.size(), 2u);
  EXPECT_EQ(timeline.bounds[0].call, 1);
  const std::string svg = Svg(trace);
  ASSERT_TRUE(testing::CheckXml(svg).ok) << testing::CheckXml(svg).error;
  EXPECT_EQ(testing::CountOccurrences(svg, R"(<rect class="band retry-after")"), 1);
  EXPECT_THAT(svg, HasSubstr("outside Retry-After floor 1000 ms"));
  EXPECT_EQ(testing::CountOccurrences(svg, R"(class="band deadline")"), 0);
}

TEST(TimelineSvg, BoundsAreBandsAndAMarkOutsideIsRed) {
  json trace = kTrace;
  trace["bounds"] = json::parse(R"([
    {"kind": "backoff", "attempt": 2, "from_ms": 5046.5, "to_ms": 6046.5, "mark_ms": 5497.3,
     "inside": true, "label": "retry 1 window"},
    {"kind": "retry-after", "attempt": 2, "from_ms": 6046.5, "mark_ms": 5497.3,
     "inside": false, "label": "Retry-After floor 1000 ms"},
    {"kind": "idle", "attempt": 1, "from_ms": 31.0, "to_ms": 5031.0, "mark_ms": 5046.5,
     "inside": false, "label": "idle timeout 5000 ms"},
    {"kind": "deadline", "attempt": 0, "from_ms": 0.5, "to_ms": 5700.5, "mark_ms": 5600,
     "inside": true, "label": "total deadline 5700 ms"},
    {"kind": "backoff", "attempt": 9, "from_ms": 1, "mark_ms": 2, "inside": true},
    {"kind": "garbage"}])");
  const Timeline timeline = BuildTimeline(trace);
  ASSERT_EQ(timeline.bounds.size(), 5u) << "one without times is skipped";
  const std::string svg = Svg(trace);
  ASSERT_TRUE(testing::CheckXml(svg).ok) << testing::CheckXml(svg).error;
  EXPECT_EQ(testing::CountOccurrences(svg, R"(<rect class="band )"), 3) << "attempt 9 has no lane";
  EXPECT_EQ(testing::CountOccurrences(svg, R"(class="mark out")"), 2);
  EXPECT_EQ(testing::CountOccurrences(svg, R"(class="mark")"), 1);
  EXPECT_THAT(svg, HasSubstr("outside Retry-After floor 1000 ms"));
  EXPECT_THAT(svg, HasSubstr("outside idle timeout 5000 ms"));
  EXPECT_THAT(svg, HasSubstr(R"(<line class="deadline")"));
  EXPECT_THAT(svg, HasSubstr(R"(class="floor")")) << "a floor has no upper bound: its edge shows";
}

// Each <text class="CLASS" x= y=>TEXT</text> of an SVG.
struct SvgText {
  double x = 0, y = 0;
  std::string text;
  bool end = false;  // text-anchor end: it runs left of x
};
std::vector<SvgText> Texts(const std::string& svg, const std::string& css) {
  std::vector<SvgText> texts;
  const std::regex pattern("<text class=\"" + css +
                           "( end)?\" x=\"([0-9.-]+)\" y=\"([0-9.-]+)\"[^>]*>([^<]*)</text>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), pattern);
       it != std::sregex_iterator(); ++it) {
    texts.push_back({std::stod((*it)[2]), std::stod((*it)[3]), (*it)[4], (*it)[1].matched});
  }
  return texts;
}

void ExpectNoOverlap(const std::vector<SvgText>& texts) {
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const double left = texts[i].end ? texts[i].x - TextWidth(texts[i].text) : texts[i].x;
    EXPECT_GE(left, 0) << texts[i].text;
    EXPECT_LE(left + TextWidth(texts[i].text), kSvgWidth)
        << texts[i].text << " runs off the picture";
    for (std::size_t j = i + 1; j < texts.size(); ++j) {
      if (texts[i].y != texts[j].y) continue;
      const double other = texts[j].end ? texts[j].x - TextWidth(texts[j].text) : texts[j].x;
      const bool apart =
          left + TextWidth(texts[i].text) <= other || other + TextWidth(texts[j].text) <= left;
      EXPECT_TRUE(apart) << "'" << texts[i].text << "' and '" << texts[j].text << "' overlap";
    }
  }
}

// A storm of quick retries: every interruption followed 1 ms later by the next start, and the
// run failing at the right edge with a long code. Labels never overlap nor leave the picture;
// a start is drawn below the interruption it follows, not on it.
TEST(TimelineSvg, LabelsAndMarkersDoNotStack) {
  json trace = {{"client", json::array()}};
  for (int attempt = 1; attempt <= 8; ++attempt) {
    const double t = (attempt - 1) * 30.0;
    trace["client"].push_back(
        {{"t_ms", t}, {"event", {{"type", "response/start"}, {"attempt", attempt}}}});
    trace["client"].push_back({{"t_ms", t + 29},
                               {"event",
                                {{"type", "response/interrupted"},
                                 {"attempt", attempt},
                                 {"failure", {{"code", "PROVIDER_OVERLOADED"}}},
                                 {"scheduled_retry_ms", 9},
                                 {"delay_source", "backoff"}}}});
  }
  trace["client"].push_back({{"t_ms", 240.0},
                             {"event",
                              {{"type", "response/failed"},
                               {"failure", {{"code", "RETRIES_EXHAUSTED_AFTER_OVERLOAD"}}}}}});
  const std::string svg = Svg(trace);
  ASSERT_TRUE(testing::CheckXml(svg).ok) << testing::CheckXml(svg).error;
  const std::vector<SvgText> labels = Texts(svg, "marker-label");
  ASSERT_FALSE(labels.empty());
  ExpectNoOverlap(labels);
  EXPECT_THAT(svg, HasSubstr(">failed RETRIES_EXHAUSTED_AFTER_OVERLOAD</text>"))
      << "the outcome is labelled in full, ending at the right edge";
  ExpectNoOverlap(Texts(svg, "note"));
  // The cross of attempt 1 (29 ms) and the start of attempt 2 (30 ms) are close: two rows.
  const std::regex cross(R"(<path class="cross" stroke="[^"]+" d="M[0-9.]+ ([0-9.]+))");
  const std::regex start(R"(<path class="start" fill="[^"]+" d="M[0-9.]+ ([0-9.]+))");
  std::smatch first_cross;
  ASSERT_TRUE(std::regex_search(svg, first_cross, cross));
  std::set<double> start_rows;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), start); it != std::sregex_iterator();
       ++it) {
    start_rows.insert(std::stod((*it)[1]) + 6);  // the triangle's middle
  }
  EXPECT_EQ(start_rows.size(), 2u) << "the first start has the row to itself, the retries below";
  EXPECT_NE(std::stod(first_cross[1]) + 5, *start_rows.rbegin());
}

// Two marks outside their bands at one time on one lane: both named, on two rows.
TEST(TimelineSvg, NamesOfMarksOnOneLaneDoNotOverlap) {
  json trace = kTrace;
  trace["bounds"] = json::parse(R"([
    {"kind": "backoff", "attempt": 2, "from_ms": 5100, "to_ms": 5300, "mark_ms": 5497.3,
     "inside": false, "label": "retry 1 window"},
    {"kind": "retry-after", "attempt": 2, "from_ms": 5600, "mark_ms": 5497.3,
     "inside": false, "label": "Retry-After floor 1000 ms"},
    {"kind": "headers", "attempt": 2, "from_ms": 5497.3, "to_ms": 5500, "mark_ms": 5510,
     "inside": false, "label": "headers timeout 2 ms"}])");
  const std::string svg = Svg(trace);
  ASSERT_TRUE(testing::CheckXml(svg).ok) << testing::CheckXml(svg).error;
  const std::vector<SvgText> names = Texts(svg, "bound-label out");
  EXPECT_EQ(names.size(), 2u) << "a third name with no free row is left out";
  ExpectNoOverlap(names);
  EXPECT_EQ(testing::CountOccurrences(svg, R"(class="mark out")"), 3) << "every mark is drawn";
}

std::string Legend(const json& trace) {
  std::ostringstream out;
  RenderTimelineLegend(BuildTimeline(trace), out);
  return out.str();
}

TEST(TimelineLegend, AnEntryForEveryBandKindDrawnInItsColour) {
  json trace = kTrace;
  EXPECT_THAT(Legend(trace), Not(HasSubstr("Bounds:"))) << "no band, no entry";
  trace["bounds"] = json::parse(R"([
    {"kind": "backoff", "attempt": 2, "from_ms": 5046.5, "to_ms": 6046.5, "mark_ms": 5497.3,
     "inside": true, "label": "retry 1 window"},
    {"kind": "idle", "attempt": 1, "from_ms": 31.0, "to_ms": 5031.0, "mark_ms": 5046.5,
     "inside": false, "label": "idle timeout 5000 ms"},
    {"kind": "deadline", "attempt": 0, "from_ms": 0.5, "to_ms": 5700.5, "mark_ms": 5600,
     "inside": true, "label": "total deadline 5700 ms"}])");
  const std::string legend = Legend(trace);
  EXPECT_THAT(legend, HasSubstr("Bounds:"));
  EXPECT_THAT(legend, HasSubstr(fmt::format(R"(style="--c:{}"></i>backoff window)",
                                            BoundColor("backoff"))));
  EXPECT_THAT(legend,
              HasSubstr(fmt::format(R"(style="--c:{}"></i>idle timeout)", BoundColor("idle"))));
  EXPECT_THAT(legend,
              HasSubstr(fmt::format(R"(<i class="swatch line" style="--c:{}"></i>total deadline)",
                                    BoundColor("deadline"))));
  EXPECT_THAT(legend, Not(HasSubstr("Retry-After floor"))) << "only the kinds drawn";
  EXPECT_THAT(legend, HasSubstr("outside"));
  // And the SVG draws each band in the colour its legend entry shows.
  const std::string svg = Svg(trace);
  EXPECT_THAT(svg, HasSubstr(fmt::format(R"(<rect class="band backoff" )")));
  EXPECT_THAT(svg, HasSubstr(fmt::format(R"(fill="{0}" stroke="{0}"><title>retry 1 window)",
                                         BoundColor("backoff"))));
}

// A deadline beyond the axis (the run kept well inside it) is not drawn, so it has no entry: the
// legend names only what the picture shows.
TEST(TimelineLegend, ABoundBeyondThePictureHasNoEntry) {
  json trace = kTrace;
  trace["bounds"] = json::parse(R"([
    {"kind": "backoff", "attempt": 2, "from_ms": 5046.5, "to_ms": 6046.5, "mark_ms": 5497.3,
     "inside": true, "label": "retry 1 window"},
    {"kind": "deadline", "attempt": 0, "from_ms": 0.5, "to_ms": 120000.5, "mark_ms": 5600,
     "inside": true, "label": "total deadline 120000 ms"}])");
  const std::string legend = Legend(trace);
  EXPECT_THAT(legend, HasSubstr("backoff window"));
  EXPECT_THAT(legend, Not(HasSubstr("total deadline"))) << legend;
  EXPECT_THAT(Svg(trace), Not(HasSubstr(R"(class="deadline")")));
}

// A band never takes a lane's or a client marker's colour: the backoff window was the blue of
// "client closed".
TEST(BoundColor, NoBandSharesAColourWithALaneOrAMarker) {
  const std::vector<std::string_view> others = {LaneColor("completed", 200),
                                                LaneColor("completed", 429),
                                                LaneColor("closed-by-server", 0),
                                                LaneColor("reset-by-server", 0),
                                                LaneColor("client-closed", 0),
                                                LaneColor("stalled-client-gave-up", 0),
                                                LaneColor("in-progress", 0),
                                                LaneColor("write-failed", 0),
                                                kStartColor,
                                                kInterruptColor,
                                                kCommitColor,
                                                kFailColor};
  std::set<std::string_view> bands;
  for (const std::string_view kind : {"retry-after", "backoff", "idle", "deadline"}) {
    bands.insert(BoundColor(kind));
    for (const std::string_view other : others) EXPECT_NE(BoundColor(kind), other) << kind;
  }
  EXPECT_EQ(bands.size(), 4u) << "the band kinds differ from one another";
  EXPECT_EQ(BoundColor("headers"), BoundColor("idle")) << "both timeouts of silence";
}

TEST(LaneColor, ByHowTheExchangeEnded) {
  EXPECT_EQ(LaneColor("completed", 200), "#2e9e5b");
  EXPECT_NE(LaneColor("completed", 429), LaneColor("completed", 200));
  EXPECT_NE(LaneColor("reset-by-server", 200), LaneColor("closed-by-server", 200));
  EXPECT_NE(LaneColor("stalled-client-gave-up", 200), LaneColor("client-closed", 200));
}

}  // namespace
}  // namespace faultline::report::internal
