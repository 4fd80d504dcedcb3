// YAML::LoadAll, made safe against yaml-cpp 0.7's endless loop on some malformed streams.
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <sstream>

#include "scenarios/yaml_reader.h"

namespace faultline::scenario::internal {
namespace {

// Ignores every event: only the documents' start positions matter.
class IgnoreEvents : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override { start = mark; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

  YAML::Mark start = YAML::Mark::null_mark();
};

}  // namespace

std::expected<std::vector<YAML::Node>, YAML::Mark> LoadDocuments(const std::string& text) {
  // yaml-cpp 0.7 meets a token that no rule consumes (a stray ',' is one) by reporting an empty
  // document and starting the next one at the same token, forever, so YAML::LoadAll never
  // returns (jbeder/yaml-cpp#1040, fixed upstream after 0.8). A first pass that only notes
  // where each document starts detects the lack of progress; after it, LoadAll must terminate.
  std::istringstream stream(text);
  YAML::Parser parser(stream);
  YAML::Mark previous = YAML::Mark::null_mark();
  for (IgnoreEvents events; parser.HandleNextDocument(events);) {
    if (!previous.is_null() && events.start.pos <= previous.pos) return std::unexpected(previous);
    previous = events.start;
  }
  return YAML::LoadAll(text);
}

}  // namespace faultline::scenario::internal
