#include "harness/cli/config_file.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <utility>

#include "reference_impl/policy_json.h"
#include "scenarios/parse_limits.h"

namespace faultline::cli {
namespace {

namespace fs = std::filesystem;
using scenario::LoadError;

// A config file is a few lines; more than this is not one (and would only cost memory).
constexpr std::size_t kMaxFileBytes = 1024 * 1024;

// Long options that no file may set, and why.
constexpr std::array<std::pair<std::string_view, std::string_view>, 9> kNotInFile = {{
    {"help", "a command-line flag only"},
    {"config", "a command-line flag only"},
    {"no-config", "a command-line flag only"},
    {"print-config", "a command-line flag only"},
    // A config file is meant to be committed; a secret belongs in a flag or the environment.
    {"control-token", "a secret: give it with the flag or FAULTLINE_CONTROL_TOKEN"},
    {"api-key", "a secret: give it with the flag"},
    // What one invocation does, not how a team runs the command.
    {"last-failed", "an action of one run, not a setting: give the flag"},
    {"merge", "an action of one invocation, not a setting: give the flag"},
    {"list-policies", "an action of one invocation, not a setting: give the flag"},
}};

std::optional<std::string_view> WhyNotInFile(std::string_view name) {
  for (const auto& [key, why] : kNotInFile) {
    if (key == name) return why;
  }
  return std::nullopt;
}

bool Configurable(const CLI::Option& option) {
  const std::vector<std::string>& names = option.get_lnames();
  return !names.empty() && !WhyNotInFile(names.front());
}

ConfigKey::Kind KindOf(const CLI::Option& option) {
  if (option.get_expected_min() == 0) return ConfigKey::Kind::kFlag;  // as CLI11 tells them
  return option.get_items_expected_max() > 1 ? ConfigKey::Kind::kList : ConfigKey::Kind::kValue;
}

bool HasConfigSection(const CLI::App& command) {
  return command.get_option_no_throw("--config") != nullptr;
}

std::vector<CLI::App*> Sections(CLI::App& app) {
  return app.get_subcommands([](CLI::App* command) { return HasConfigSection(*command); });
}

// "faultline.yaml:3:5" positions: yaml-cpp's are 0-based, and -1 when it has none.
LoadError ErrorAt(const std::string& file, const YAML::Mark& mark, std::string path,
                  std::string message) {
  const bool known = mark.line >= 0;
  return LoadError{.file = file,
                   .line = known ? mark.line + 1 : 0,
                   .column = known ? mark.column + 1 : 0,
                   .path = std::move(path),
                   .message = std::move(message)};
}

// The value's position, or its key's when the value has none (an empty value).
YAML::Mark MarkOf(const YAML::Node& value, const YAML::Node& key) {
  return value.Mark().line >= 0 ? value.Mark() : key.Mark();
}

std::string Shape(const YAML::Node& node) {
  if (node.IsMap()) return "a mapping";
  if (node.IsSequence()) return "a list";
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  return fmt::format("'{}'", node.Scalar());
}

// A YAML 1.2 boolean, unquoted.
std::optional<bool> Boolean(const YAML::Node& node) {
  if (!node.IsScalar() || node.Tag() == "!") return std::nullopt;
  constexpr std::string_view kTrue[] = {"true", "True", "TRUE"};
  constexpr std::string_view kFalse[] = {"false", "False", "FALSE"};
  if (std::ranges::find(kTrue, node.Scalar()) != std::end(kTrue)) return true;
  if (std::ranges::find(kFalse, node.Scalar()) != std::end(kFalse)) return false;
  return std::nullopt;
}

// The file --config names, else ./faultline.yaml when there is one; "" for none.
std::string ChooseFile(const ConfigFlags& flags) {
  if (flags.none) return "";
  if (!flags.file.empty()) return flags.file;
  std::error_code error;
  return fs::exists(kConfigFileName, error) ? std::string(kConfigFileName) : "";
}

std::expected<YAML::Node, LoadError> ReadYaml(const std::string& file) {
  const auto fail = [&file](std::string message) {
    LoadError error;
    error.file = file;
    error.message = std::move(message);
    return std::unexpected(std::move(error));
  };
  std::error_code error;
  if (fs::is_directory(file, error)) return fail("is a folder, not a config file");
  std::ifstream in(file, std::ios::binary);
  if (!in) return fail(fmt::format("cannot read the config file: {}", std::strerror(errno)));
  std::string text(kMaxFileBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxFileBytes) {
    return fail(fmt::format("larger than {} bytes: not a config file", kMaxFileBytes));
  }
  if (scenario::NestsDeeperThan(text, scenario::kMaxJsonDepth)) {
    return fail(fmt::format("nests deeper than {} levels", scenario::kMaxJsonDepth));
  }
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return std::unexpected(ErrorAt(file, e.mark, "", "not valid YAML: " + e.msg));
  }
}

// The names of `options`' keys, for "did you mean".
std::vector<std::string_view> KeyNames(const std::vector<CLI::Option*>& options) {
  std::vector<std::string_view> names;
  for (const CLI::Option* option : options) names.push_back(option->get_lnames().front());
  return names;
}

// Why `key` is not a key of `command`'s section.
std::string UnknownKey(const CLI::App& command, const std::vector<CLI::Option*>& options,
                       const std::string& key) {
  if (const auto why = WhyNotInFile(key); why && command.get_option_no_throw("--" + key)) {
    return fmt::format("'{}' cannot be set in a config file: {}", key, *why);
  }
  for (const CLI::Option* option : options) {
    if (option->check_lname(key)) {  // another name of the option
      return fmt::format("'{}' is written '{}' in a config file", key,
                         option->get_lnames().front());
    }
  }
  const std::vector<std::string_view> names = KeyNames(options);
  const std::string hint = ref::DidYouMean(key, names);
  return fmt::format("unknown key '{}' for faultline {}{}", key, command.get_name(),
                     hint.empty() ? fmt::format(" (its keys are its long flags: faultline {} "
                                                "--help)",
                                                command.get_name())
                                  : hint);
}

// The value of `key` as the command line would give it, checked for shape.
std::expected<std::vector<std::string>, std::string> Inputs(const CLI::Option& option,
                                                            const YAML::Node& value) {
  switch (KindOf(option)) {
    case ConfigKey::Kind::kFlag:
      if (const std::optional<bool> flag = Boolean(value)) {
        return std::vector<std::string>{*flag ? "true" : "false"};
      }
      return std::unexpected("expected true or false, got " + Shape(value));
    case ConfigKey::Kind::kValue:
      if (value.IsScalar()) return std::vector<std::string>{value.Scalar()};
      return std::unexpected("expected one value, got " + Shape(value));
    case ConfigKey::Kind::kList:
      break;
  }
  if (value.IsScalar()) return std::vector<std::string>{value.Scalar()};  // a list of one
  if (!value.IsSequence()) return std::unexpected("expected a list, got " + Shape(value));
  std::vector<std::string> inputs;
  for (const YAML::Node& item : value) {
    if (!item.IsScalar()) {
      return std::unexpected("expected a list of values, got " + Shape(item) + " in it");
    }
    inputs.push_back(item.Scalar());
  }
  return inputs;
}

// Applies one section to its command; `record` (the running command's) gets what was set.
std::expected<void, LoadError> ApplySection(CLI::App& command, const YAML::Node& section,
                                            const std::string& file, AppliedConfig* record) {
  const std::vector<CLI::Option*> options =
      command.get_options([](CLI::Option* option) { return Configurable(*option); });
  std::map<std::string, YAML::Mark> seen;
  for (const auto& entry : section) {
    const std::string key = entry.first.Scalar();
    const std::string path = command.get_name() + "." + key;
    const YAML::Mark at = entry.first.Mark();
    if (const auto [first, fresh] = seen.emplace(key, at); !fresh) {
      return std::unexpected(
          ErrorAt(file, at, path,
                  fmt::format("'{}' given twice (first at line {})", key, first->second.line + 1)));
    }
    const auto found = std::ranges::find_if(
        options, [&key](const CLI::Option* o) { return o->get_lnames().front() == key; });
    if (found == options.end()) {
      return std::unexpected(ErrorAt(file, at, path, UnknownKey(command, options, key)));
    }
    CLI::Option& option = **found;
    const YAML::Mark value_at = MarkOf(entry.second, entry.first);
    auto inputs = Inputs(option, entry.second);
    if (!inputs) return std::unexpected(ErrorAt(file, value_at, path, inputs.error()));
    if (option.count() > 0) {  // the command line (or the environment) has it
      if (record != nullptr) record->overridden.push_back(key);
      continue;
    }
    try {
      option.add_result(std::move(*inputs));
      option.run_callback();
    } catch (const CLI::Error& e) {
      return std::unexpected(ErrorAt(file, value_at, path, e.what()));
    }
    if (record != nullptr) record->set[key] = fmt::format("{}:{}", file, at.line + 1);
  }
  return {};
}

// The command `name` of the file's top level, or why it has no section.
std::expected<CLI::App*, std::string> SectionCommand(CLI::App& app, const std::string& name) {
  std::vector<std::string_view> names;
  const std::vector<CLI::App*> sections = Sections(app);
  for (CLI::App* command : sections) {
    if (command->get_name() == name) return command;
    names.push_back(command->get_name());
  }
  const std::string hint = ref::DidYouMean(name, names);
  return std::unexpected(
      fmt::format("unknown section '{}'{} (the sections: {})", name, hint, fmt::join(names, ", ")));
}

std::string ValueText(const std::vector<std::string>& values, ConfigKey::Kind kind) {
  YAML::Emitter emitter;
  if (kind == ConfigKey::Kind::kList) {
    emitter << YAML::Flow << values;
  } else {
    emitter << (values.empty() ? std::string() : values.back());
  }
  return emitter.c_str();
}

}  // namespace

void AddConfigFlags(CLI::App& command, ConfigFlags& flags) {
  constexpr const char* kGroup = "Config file (docs/config.md)";
  CLI::Option* file =
      command
          .add_option("--config", flags.file,
                      "read options from FILE instead of ./faultline.yaml (its section for this "
                      "command); a flag given here overrides the file")
          ->type_name("FILE")
          ->group(kGroup);
  command.add_flag("--no-config", flags.none, "ignore ./faultline.yaml")
      ->excludes(file)
      ->group(kGroup);
  command
      .add_flag("--print-config", flags.print,
                "print the effective options (flags, file, defaults) as this command's section "
                "of a faultline.yaml, each with where it came from, and exit")
      ->group(kGroup);
}

std::vector<ConfigKey> ConfigKeys(const CLI::App& app) {
  std::vector<ConfigKey> keys;
  for (const CLI::App* command :
       app.get_subcommands([](const CLI::App* c) { return HasConfigSection(*c); })) {
    for (const CLI::Option* option :
         command->get_options([](const CLI::Option* o) { return Configurable(*o); })) {
      const std::string type = option->get_type_name();
      keys.push_back({.section = command->get_name(),
                      .name = option->get_lnames().front(),
                      .kind = KindOf(*option),
                      .type = type.substr(0, type.find(':'))});
    }
  }
  return keys;
}

std::expected<AppliedConfig, LoadError> ApplyConfigFile(CLI::App& app, const CLI::App& command,
                                                        const ConfigFlags& flags) {
  AppliedConfig applied;
  applied.file = ChooseFile(flags);
  if (applied.file.empty()) return applied;
  const std::string& file = applied.file;
  auto root = ReadYaml(file);
  if (!root) return std::unexpected(root.error());
  if (root->IsNull()) return applied;  // an empty file
  if (!root->IsMap()) {
    return std::unexpected(ErrorAt(file, root->Mark(), "",
                                   "expected a section per command (run:, simulate:, serve:, "
                                   "call:), got " +
                                       Shape(*root)));
  }
  std::map<std::string, YAML::Mark> seen;
  for (const auto& entry : *root) {
    const std::string name = entry.first.Scalar();
    const YAML::Mark at = entry.first.Mark();
    auto section = SectionCommand(app, name);
    if (!section) return std::unexpected(ErrorAt(file, at, name, section.error()));
    if (!seen.emplace(name, at).second) {
      return std::unexpected(
          ErrorAt(file, at, name, fmt::format("section '{}' given twice", name)));
    }
    if (entry.second.IsNull()) continue;  // an empty section
    if (!entry.second.IsMap()) {
      return std::unexpected(
          ErrorAt(file, MarkOf(entry.second, entry.first), name,
                  "expected the command's options (key: value), got " + Shape(entry.second)));
    }
    const bool runs = *section == &command;
    if (auto done = ApplySection(**section, entry.second, file, runs ? &applied : nullptr); !done) {
      return std::unexpected(done.error());
    }
  }
  return applied;
}

void PrintEffectiveConfig(const CLI::App& command, const AppliedConfig& applied,
                          std::ostream& out) {
  out << fmt::format(
      "# faultline {}: the effective options, each from a flag, its environment variable, {} or\n"
      "# the default (the first there is); defaults and unset options are commented out.\n{}:\n",
      command.get_name(), applied.file.empty() ? "a config file (none read)" : applied.file,
      command.get_name());
  for (const CLI::Option* option :
       command.get_options([](const CLI::Option* o) { return Configurable(*o); })) {
    const std::string& key = option->get_lnames().front();
    const ConfigKey::Kind kind = KindOf(*option);
    if (option->count() == 0) {
      const std::string fallback =
          kind == ConfigKey::Kind::kFlag ? "false" : option->get_default_str();
      out << fmt::format("  # {}: {}\n", key,
                         fallback.empty() ? "(not set)" : fallback + "  # default");
      continue;
    }
    const auto from_file = applied.set.find(key);
    const char* env =
        option->get_envname().empty() ? nullptr : std::getenv(option->get_envname().c_str());
    const std::string source = from_file != applied.set.end() ? from_file->second
                               : env != nullptr               ? option->get_envname()
                                                              : "command line";
    out << fmt::format("  {}: {}  # {}\n", key, ValueText(option->results(), kind), source);
  }
}

}  // namespace faultline::cli
