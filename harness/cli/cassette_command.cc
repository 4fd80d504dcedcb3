#include "harness/cli/cassette_command.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cassette_import/aimock_import.h"
#include "cassette_import/har_import.h"

namespace faultline::cli {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kCassetteFooter =
    R"(A cassette is one recorded HTTP exchange with its timing (docs/cassettes.md), played back by a
scenario entry `cassette: FILE` in both worlds, with the catalogue's faults overlaid at event N.
`faultline proxy --record DIR` records them from live traffic; `faultline cassette import` makes
them from a browser's HAR export or from aimock fixtures.)";

constexpr std::string_view kImportFooter =
    R"(--har FILE (HAR 1.2: Chrome and Firefox DevTools, Microsoft Dev Proxy):
  Every entry that is a POST to a dialect's path (/v1/chat/completions, /v1/messages,
  /v1/responses, Gemini's :generateContent, Ollama's /api/chat, Bedrock's /converse) becomes a
  cassette; the others are skipped and listed on stderr with the reason, and so is an entry that
  cannot be replayed as recorded (status 0: aborted; no content.text; a content.encoding other than
  base64; a text shorter than content.size). HAR has no per-chunk timing: the head comes at
  timings.wait, the body's events (one write each, counted by the reference client's decoders)
  are spread evenly over timings.receive. Credentials are redacted as `proxy --record` does.

--aimock FILE (aimock's {"fixtures": [...]}):
  Text and tool-call fixtures are rendered as aimock streams them in --dialect (openai-chat or
  anthropic-messages): its chunks of chunkSize characters, its timing (streamingProfile without
  the jitter, recordedTimings, latency), ids derived from the fixture instead of drawn. Error
  fixtures become their status and JSON body. Other kinds are skipped with the reason.

Both write one scenario per dialect into --out (--scenario; with several dialects its name gets
"-DIALECT") whose responses play the cassettes in order:

  faultline cassette import --har session.har --out recorded/
  faultline run recorded/scenario.yaml --time both)";

}  // namespace

CLI::App* AddCassetteCommand(CLI::App& app, CassetteImportOptions& options) {
  CLI::App* cassette = app.add_subcommand(
      "cassette", "Make cassettes (recorded exchanges to play back) from HAR files or aimock.");
  cassette->require_subcommand(1);
  cassette->footer(std::string(kCassetteFooter));
  CLI::App* import = cassette->add_subcommand(
      "import", "Convert a HAR file or aimock fixtures into cassettes and a scenario to run.");
  CLI::Option* har =
      import->add_option("--har", options.har, "A HAR 1.2 file (DevTools, Dev Proxy)");
  CLI::Option* aimock = import->add_option("--aimock", options.aimock,
                                           "An aimock fixture file ({\"fixtures\": [...]})");
  har->excludes(aimock);
  import->add_option("--out", options.out, "The folder for the cassettes and the scenario")
      ->required();
  import->add_option("--scenario", options.scenario, "The scenario's file name in --out")
      ->capture_default_str();
  import->add_option("--name", options.name,
                     "The scenario's name (default: imported/ and the input's name)");
  import
      ->add_option("--dialect", options.dialect, "--aimock: the dialect to render the fixtures in")
      ->check(CLI::IsMember({"openai-chat", "anthropic-messages"}))
      ->capture_default_str();
  import->add_option("--chunk-size", options.chunk_size, "--aimock: aimock's --chunk-size")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str();
  import->add_option("--latency", options.latency_ms, "--aimock: aimock's --latency (ms a chunk)")
      ->check(CLI::Range(0.0, 3'600'000.0))
      ->capture_default_str();
  import->footer(std::string(kImportFooter));
  return import;
}

ExitCode RunCassetteImport(const CassetteImportOptions& options, std::ostream& out,
                           std::ostream& err) {
  const std::string& input = options.har.empty() ? options.aimock : options.har;
  if (input.empty()) {
    err << "faultline cassette import: give --har FILE or --aimock FILE\n";
    return ExitCode::kUsageError;
  }
  std::ifstream file(input, std::ios::binary);
  if (!file) {
    err << "faultline cassette import: cannot read " << input << "\n";
    return ExitCode::kUsageError;
  }
  std::stringstream text;
  text << file.rdbuf();
  const scenario::ImportOptions import_options{options.scenario, options.name};
  std::expected<scenario::Import, scenario::LoadError> import;
  if (!options.har.empty()) {
    import = scenario::ImportHar(text.str(), input, import_options);
  } else {
    const scenario::AimockOptions aimock{
        scenario::ParseDialect(options.dialect).value_or(scenario::Dialect::kOpenAiChat),
        options.chunk_size, options.latency_ms, ""};
    import = scenario::ImportAimock(text.str(), input, aimock, import_options);
  }
  if (!import) {
    err << "faultline cassette import: " << import.error().ToString() << "\n";
    return ExitCode::kUsageError;
  }
  for (const scenario::ImportSkip& skip : import->skipped) {
    err << "faultline cassette import: skipped " << skip.where << ": " << skip.reason << "\n";
  }
  std::error_code ec;
  fs::create_directories(options.out, ec);
  const auto write = [&](const std::string& name, const std::string& content) {
    const fs::path path = fs::path(options.out) / name;
    std::ofstream stream(path, std::ios::binary | std::ios::trunc);
    stream << content;
    if (!stream) err << "faultline cassette import: cannot write " << path.string() << "\n";
    return static_cast<bool>(stream);
  };
  bool written = !ec;
  for (const scenario::ImportedCassette& cassette : import->cassettes) {
    written = written && write(cassette.file, scenario::WriteCassette(cassette.cassette));
  }
  for (const scenario::ImportedScenario& played : import->scenarios) {
    written = written && write(played.file, played.text);
    if (written) {
      out << (fs::path(options.out) / played.file).string() << ": "
          << scenario::ToString(played.dialect) << "\n";
    }
  }
  if (!written) {
    if (ec)
      err << "faultline cassette import: cannot create " << options.out << ": " << ec.message()
          << "\n";
    return ExitCode::kUsageError;
  }
  out << "faultline cassette import: " << import->cassettes.size() << " cassettes, "
      << import->skipped.size() << " skipped, into " << options.out << "\n";
  return ExitCode::kSuccess;
}

}  // namespace faultline::cli
