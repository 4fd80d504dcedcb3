#include "reports/report.h"

#include <array>
#include <utility>

#include "fmt/format.h"

namespace faultline::report {
namespace {

struct FormatName {
  Format format;
  std::string_view name;
  std::string_view extension;
};

constexpr std::array<FormatName, 4> kFormats{{
    {Format::kJson, "json", ".json"},
    {Format::kJUnit, "junit", ".xml"},
    {Format::kMarkdown, "md", ".md"},
    {Format::kHtml, "html", ".html"},
}};

const FormatName& Describe(Format format) {
  for (const FormatName& entry : kFormats) {
    if (entry.format == format) return entry;
  }
  return kFormats[0];
}

bool EndsWith(std::string_view text, std::string_view suffix) {
  if (text.size() < suffix.size()) return false;
  const std::string_view tail = text.substr(text.size() - suffix.size());
  for (std::size_t i = 0; i < suffix.size(); ++i) {
    const char c =
        tail[i] >= 'A' && tail[i] <= 'Z' ? static_cast<char>(tail[i] - 'A' + 'a') : tail[i];
    if (c != suffix[i]) return false;
  }
  return true;
}

// A word the shell passes through unchanged, or the text in single quotes.
std::string ShellWord(std::string_view text) {
  const bool plain = !text.empty() && text.find_first_not_of(
                                          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789-_./:=@%+,") == std::string_view::npos;
  if (plain) return std::string(text);
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The in-process reference client is the default subject: no --adapter.
constexpr std::string_view kInProcess = "(in-process)";

}  // namespace

std::string ReproduceCommand(const RunResult& result, const ScenarioResult& scenario) {
  std::string command = "faultline run";
  if (!scenario.source.empty() && !scenario.source.starts_with("<builtin>")) {
    command += " " + ShellWord(scenario.source);
  }
  command += fmt::format(" --filter {} --seed {}", ShellWord(scenario.name), result.seed);
  if (scenario.repetition > 0) command += fmt::format(" --repeat {}", scenario.repetition + 1);
  if (!result.subject_options.empty()) {
    for (const std::string& word : result.subject_options) command += " " + ShellWord(word);
  } else if (!result.subject.ends_with(kInProcess)) {
    command += " --adapter " + ShellWord(result.subject);
  }
  command += " --time " + ShellWord(scenario.world);
  return command;
}

std::string ReproduceCommand(const RunResult& result, const ThresholdResult& threshold) {
  const ScenarioResult* last = nullptr;  // its last repetition: --repeat covers them all
  for (const ScenarioResult& run : result.scenarios) {
    if (run.name == threshold.name && run.world == threshold.world &&
        (last == nullptr || run.repetition > last->repetition)) {
      last = &run;
    }
  }
  ScenarioResult every;
  every.name = threshold.name;
  every.world = threshold.world;
  if (last != nullptr) every = *last;
  std::string command = ReproduceCommand(result, every);
  if (threshold.origin == "cli") command += " --threshold " + ShellWord(threshold.expression);
  return command;
}

std::expected<Format, std::string> ParseFormat(std::string_view name) {
  if (name == "markdown") return Format::kMarkdown;
  for (const FormatName& entry : kFormats) {
    if (entry.name == name) return entry.format;
  }
  return std::unexpected(
      fmt::format("unknown report format \"{}\" (expected json|junit|md|html)", name));
}

std::string_view ToString(Format format) { return Describe(format).name; }

std::string_view FileExtension(Format format) { return Describe(format).extension; }

std::optional<Format> FormatForPath(std::string_view path) {
  constexpr std::array<std::pair<std::string_view, Format>, 6> kSuffixes{{
      {".json", Format::kJson},
      {".xml", Format::kJUnit},
      {".md", Format::kMarkdown},
      {".markdown", Format::kMarkdown},
      {".html", Format::kHtml},
      {".htm", Format::kHtml},
  }};
  for (const auto& [suffix, format] : kSuffixes) {
    if (EndsWith(path, suffix)) return format;
  }
  return std::nullopt;
}

void Render(const RunResult& result, Format format, std::ostream& out) {
  switch (format) {
    case Format::kJson:
      return RenderJson(result, out);
    case Format::kJUnit:
      return RenderJUnit(result, out);
    case Format::kMarkdown:
      return RenderMarkdown(result, out);
    case Format::kHtml:
      return RenderHtml(result, out);
  }
}

void RenderJson(const RunResult& result, std::ostream& out) { WriteJson(result, out); }

}  // namespace faultline::report
