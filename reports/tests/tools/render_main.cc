// reports_render: renders run-result JSON files, for tests/screenshot.sh and manual looks until
// `faultline report render` exists.
//   reports_render json|junit|md|html RESULT.json            one result to stdout
//   reports_render matrix-html|matrix-md RESULT.json...      the conformance matrix
// Exit code 0 on success, 2 on usage or input errors.
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "reports/report.h"

namespace {

int Fail(const std::string& message) {
  std::cerr << "reports_render: " << message << '\n';
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace faultline::report;
  if (argc < 3) return Fail("usage: reports_render FORMAT RESULT.json...");
  const std::string format = argv[1];
  std::vector<RunResult> results;
  for (int i = 2; i < argc; ++i) {
    std::ifstream file(argv[i]);
    if (!file) return Fail(std::string("cannot open ") + argv[i]);
    const nlohmann::json json = nlohmann::json::parse(file, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded()) return Fail(std::string(argv[i]) + ": not valid JSON");
    auto result = RunResultFromJson(json);
    if (!result) return Fail(std::string(argv[i]) + ": " + result.error());
    results.push_back(std::move(*result));
  }
  if (format == "matrix-html") return RenderMatrixHtml(results, std::cout), 0;
  if (format == "matrix-md") return RenderMatrixMarkdown(results, std::cout), 0;
  auto parsed = ParseFormat(format);
  if (!parsed) return Fail(parsed.error());
  if (results.size() != 1) return Fail("one result file per render (use merge first)");
  Render(results[0], *parsed, std::cout);
  return 0;
}
