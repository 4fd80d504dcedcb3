#include "harness/gateways/gateway.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness/gateways/embedded_gateways.h"

namespace faultline::harness {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kOpen = "{{";
constexpr std::string_view kClose = "}}";

// The value of a plain name in `upstream`'s context (nullopt: not a name there).
std::optional<std::string> UpstreamValue(std::string_view name, const Upstream& upstream,
                                         std::size_t index) {
  if (name == "id") return upstream.id;
  if (name == "host") return upstream.host;
  if (name == "port") return std::to_string(upstream.port);
  if (name == "index") return std::to_string(index);
  return std::nullopt;
}

// Renders `text` with `upstream` (and its index) as the innermost context, or none.
std::expected<std::string, std::string> Render(std::string_view text, const GatewayPlace& place,
                                               const Upstream* upstream, std::size_t index) {
  std::string out;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t open = text.find(kOpen, at);
    if (open == std::string_view::npos) {
      out.append(text.substr(at));
      break;
    }
    out.append(text.substr(at, open - at));
    const std::size_t close = text.find(kClose, open);
    if (close == std::string_view::npos) return std::unexpected("a '{{' without its '}}'");
    const std::string_view tag = text.substr(open + kOpen.size(), close - open - kOpen.size());
    at = close + kClose.size();
    if (tag.starts_with('#') || tag.starts_with('^')) {
      const std::string_view section = tag.substr(1);
      const std::string end = fmt::format("{{{{/{}}}}}", section);
      const std::size_t end_at = text.find(end, at);
      if (end_at == std::string_view::npos) {
        return std::unexpected(fmt::format("section '{}' is not closed by {}", section, end));
      }
      const std::string_view body = text.substr(at, end_at - at);
      at = end_at + end.size();
      if (section == "upstreams" && tag.starts_with('#') && upstream == nullptr) {
        for (std::size_t i = 0; i < place.upstreams.size(); ++i) {
          auto rendered = Render(body, place, &place.upstreams[i], i);
          if (!rendered) return rendered;
          out += *rendered;
        }
      } else if (section == "backup" && upstream != nullptr) {
        if (upstream->backup == tag.starts_with('#')) {
          auto rendered = Render(body, place, upstream, index);
          if (!rendered) return rendered;
          out += *rendered;
        }
      } else {
        return std::unexpected(fmt::format("unknown section '{}' here", tag));
      }
      continue;
    }
    if (tag == "dir") {
      out += place.dir;
    } else if (tag == "packages") {
      out += place.packages;
    } else if (tag == "listen_port") {
      out += std::to_string(place.listen_port);
    } else if (auto value = upstream ? UpstreamValue(tag, *upstream, index) : std::nullopt) {
      out += *value;
    } else {
      return std::unexpected(fmt::format(
          "unknown name '{{{{{}}}}}' (known: dir, listen_port, packages; in {{{{#upstreams}}}}: "
          "id, host, port, index, and the section backup)",
          tag));
    }
  }
  return out;
}

std::optional<std::string> ReadFolderFile(std::string_view folder, std::string_view name) {
  std::ifstream in(std::filesystem::path(folder) / name, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<std::string> ReadEmbeddedFile(std::string_view folder, std::string_view name) {
  const std::string path = fmt::format("{}/{}", folder, name);
  for (const EmbeddedFile& file : EmbeddedGatewayFiles()) {
    if (file.path == path) return std::string(file.content);
  }
  return std::nullopt;
}

}  // namespace

std::expected<std::string, std::string> RenderTemplate(std::string_view text,
                                                       const GatewayPlace& place) {
  return Render(text, place, nullptr, 0);
}

std::expected<GatewayDefinition, std::string> ParseGatewayDefinition(std::string_view json_text,
                                                                     std::string_view source,
                                                                     std::string_view folder,
                                                                     TemplateReader read_file) {
  const auto fail = [&](std::string what) {
    return std::unexpected(fmt::format("{}: {}", source, what));
  };
  const Json json = Json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) return fail("not a JSON object");
  GatewayDefinition out;
  const auto text_of = [&](const char* key, std::string& into, bool required) -> bool {
    const auto it = json.find(key);
    if (it == json.end()) return !required;
    if (!it->is_string()) return false;
    into = it->get<std::string>();
    return true;
  };
  if (!text_of("name", out.name, true) || out.name.empty()) return fail("'name' must be a text");
  if (!text_of("command", out.command, true) || out.command.empty()) {
    return fail("'command' must be a text (run with /bin/sh -c)");
  }
  if (!text_of("description", out.description, false)) return fail("'description' is a text");
  if (!text_of("needs", out.needs, false)) return fail("'needs' is a text");
  // A gateway configured by the client's headers alone (Portkey) has no files.
  const Json no_files = Json::array();
  const auto found_files = json.find("files");
  if (found_files != json.end() && !found_files->is_array()) {
    return fail("'files' lists the config templates of the folder");
  }
  const Json& files = found_files == json.end() ? no_files : *found_files;
  for (const Json& name : files) {
    if (!name.is_string() || name.get<std::string>().empty() ||
        name.get<std::string>().find('/') != std::string::npos) {
      return fail("each of 'files' is a file name in the definition's folder");
    }
    auto text = read_file(folder, name.get<std::string>());
    if (!text) return fail(fmt::format("the template '{}' is missing", name.get<std::string>()));
    out.files.push_back({name.get<std::string>(), std::move(*text)});
  }
  if (const auto headers = json.find("client_headers"); headers != json.end()) {
    if (!headers->is_object()) return fail("'client_headers' maps header names to templates");
    for (const auto& [name, value] : headers->items()) {
      const bool token = !name.empty() && std::ranges::all_of(name, [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
      });
      if (!token || !value.is_string()) {
        return fail(fmt::format("client_headers: '{}' must be a header name with a text", name));
      }
      out.client_headers.emplace_back(name, value.get<std::string>());
    }
  }
  if (const auto dialects = json.find("dialects"); dialects != json.end()) {
    if (!dialects->is_array()) return fail("'dialects' lists dialect names");
    for (const Json& dialect : *dialects) {
      if (!dialect.is_string()) return fail("'dialects' lists dialect names");
      out.dialects.push_back(dialect.get<std::string>());
    }
  }
  const auto declares = json.find("declares");
  if (declares != json.end()) {
    const auto attempts =
        declares->is_object() ? declares->find("max_upstream_attempts") : declares->end();
    if (attempts == declares->end() || !attempts->is_number_integer() || attempts->get<int>() < 1 ||
        attempts->get<int>() > 100) {
      return fail("'declares.max_upstream_attempts' must be a whole number from 1 to 100");
    }
    out.declares.max_upstream_attempts = attempts->get<int>();
  }
  // Every template must render with a place of two upstreams: errors show now, not mid-run.
  const GatewayPlace probe{
      "/tmp/x", "/tmp/p", 1, {{"a", "127.0.0.1", 2, false}, {"b", "127.0.0.1", 3, true}}};
  for (const GatewayDefinition::File& file : out.files) {
    if (auto rendered = RenderTemplate(file.text, probe); !rendered) {
      return fail(fmt::format("{}: {}", file.name, rendered.error()));
    }
  }
  if (auto rendered = RenderTemplate(out.command, probe); !rendered) {
    return fail(fmt::format("command: {}", rendered.error()));
  }
  for (const auto& [name, value] : out.client_headers) {
    if (auto rendered = RenderTemplate(value, probe); !rendered) {
      return fail(fmt::format("client_headers.{}: {}", name, rendered.error()));
    }
  }
  return out;
}

std::string GatewayPackagesDir() {
  if (const char* dir = std::getenv("FAULTLINE_GATEWAYS_DIR"); dir != nullptr && *dir != '\0') {
    return (std::filesystem::path(dir) / "packages").string();
  }
  return (std::filesystem::path(FAULTLINE_GATEWAYS_DIR) / "packages").string();
}

std::vector<std::string> BuiltinGatewayNames() {
  std::vector<std::string> names;
  for (const EmbeddedFile& file : EmbeddedGatewayFiles()) {
    if (file.path.ends_with("/gateway.json")) {
      names.emplace_back(
          file.path.substr(0, file.path.size() - std::string_view("/gateway.json").size()));
    }
  }
  std::ranges::sort(names);
  return names;
}

std::expected<GatewayDefinition, std::string> LoadGateway(std::string_view name_or_folder) {
  if (auto json = ReadEmbeddedFile(name_or_folder, "gateway.json")) {
    return ParseGatewayDefinition(*json, fmt::format("<builtin>/{}/gateway.json", name_or_folder),
                                  name_or_folder, ReadEmbeddedFile);
  }
  if (auto json = ReadFolderFile(name_or_folder, "gateway.json")) {
    return ParseGatewayDefinition(*json,
                                  (std::filesystem::path(name_or_folder) / "gateway.json").string(),
                                  name_or_folder, ReadFolderFile);
  }
  std::string known;
  for (const std::string& name : BuiltinGatewayNames()) known += (known.empty() ? "" : ", ") + name;
  return std::unexpected(
      fmt::format("no gateway '{}': neither a shipped one ({}) nor a folder with gateway.json "
                  "(docs/gateways.md)",
                  name_or_folder, known));
}

}  // namespace faultline::harness
