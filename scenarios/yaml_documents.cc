// YAML::LoadAll, made safe against yaml-cpp 0.7's endless loop on some malformed streams and
// bounded by ParseLimits before any node is built.
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <sstream>
#include <unordered_map>

#include "fmt/format.h"
#include "scenarios/yaml_reader.h"

namespace faultline::scenario::internal {
namespace {

// Thrown by the event handler to stop yaml-cpp at the first event over a limit (yaml-cpp offers
// no other way out of a document); caught in LoadDocuments.
struct OverLimit {
  YAML::Mark mark;
  std::string reason;
};

// What a node holds, as the budget counts it.
struct Size {
  std::size_t keys = 0;   // keys and list items
  std::size_t bytes = 0;  // scalar bytes
};

// Counts the structure of each document against the limits, and notes where it starts. An alias
// counts again the keys, items and scalar bytes of the node it names (so a "billion laughs" of
// aliases is bounded like the text it stands for); an alias of a collection still open counts
// once.
class CountingEvents : public YAML::EventHandler {
 public:
  explicit CountingEvents(const ParseLimits& limits) : limits_(limits), budget_(limits) {}

  void OnDocumentStart(const YAML::Mark& mark) override {
    start = mark;
    budget_ = StructureBudget(limits_);
    frames_.clear();
    anchored_.clear();
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { Node(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    const auto it = anchored_.find(anchor);
    Node(mark, it == anchored_.end() ? Size{} : it->second);
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string& value) override {
    Node(mark, {0, value.size()});
    if (anchor != YAML::NullAnchor) anchored_[anchor] = {0, value.size()};
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(mark, anchor, /*map=*/false);
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(mark, anchor, /*map=*/true);
  }
  void OnMapEnd() override { Close(); }

  YAML::Mark start = YAML::Mark::null_mark();

 private:
  struct Frame {
    bool map = false;
    std::size_t children = 0;  // nodes seen directly inside (a map's keys and values alternate)
    YAML::anchor_t anchor = YAML::NullAnchor;
    Size before;  // the budget's counts when the collection opened
  };

  // A node at the current position, holding `held` (a scalar's bytes, or what an alias
  // repeats): a key or a list item counts, a mapping's value does not.
  void Node(const YAML::Mark& mark, Size held = {}) {
    std::size_t keys = held.keys;
    if (!frames_.empty()) {
      Frame& parent = frames_.back();
      if (!parent.map || parent.children % 2 == 0) ++keys;
      ++parent.children;
    }
    if (keys > 0 && !budget_.Count(keys)) throw OverLimit{mark, budget_.reason()};
    if (held.bytes > 0 && !budget_.CountBytes(held.bytes)) {
      throw OverLimit{mark, budget_.reason()};
    }
  }
  void Open(const YAML::Mark& mark, YAML::anchor_t anchor, bool map) {
    Node(mark);
    if (!budget_.Open()) throw OverLimit{mark, budget_.reason()};
    frames_.push_back(Frame{map, 0, anchor, {budget_.keys(), budget_.bytes()}});
  }
  void Close() {
    if (frames_.empty()) return;
    const Frame frame = frames_.back();
    frames_.pop_back();
    budget_.Close();
    if (frame.anchor != YAML::NullAnchor) {
      anchored_[frame.anchor] = {budget_.keys() - frame.before.keys,
                                 budget_.bytes() - frame.before.bytes};
    }
  }

  ParseLimits limits_;
  StructureBudget budget_;
  std::vector<Frame> frames_;
  std::unordered_map<YAML::anchor_t, Size> anchored_;  // what each anchor holds
};

std::string UnexpectedAt(const std::string& text, const YAML::Mark& mark) {
  const auto at = static_cast<std::size_t>(mark.pos);
  return at < text.size() ? fmt::format("invalid YAML: unexpected '{}'", text[at])
                          : std::string("invalid YAML: unexpected end of the text");
}

}  // namespace

std::expected<std::vector<YAML::Node>, DocumentError> LoadDocuments(const std::string& text,
                                                                    const ParseLimits& limits) {
  // yaml-cpp 0.7 meets a token that no rule consumes (a stray ',' is one) by reporting an empty
  // document and starting the next one at the same token, forever, so YAML::LoadAll never
  // returns (jbeder/yaml-cpp#1040, fixed upstream after 0.8). A first pass that only counts
  // events detects the lack of progress and the limits; after it, LoadAll must terminate.
  std::istringstream stream(text);
  YAML::Parser parser(stream);
  YAML::Mark previous = YAML::Mark::null_mark();
  CountingEvents events(limits);
  try {
    while (parser.HandleNextDocument(events)) {
      if (!previous.is_null() && events.start.pos <= previous.pos) {
        return std::unexpected(DocumentError{previous, UnexpectedAt(text, previous), false});
      }
      previous = events.start;
    }
  } catch (OverLimit& over) {
    return std::unexpected(DocumentError{over.mark, std::move(over.reason), true});
  }
  return YAML::LoadAll(text);
}

}  // namespace faultline::scenario::internal
