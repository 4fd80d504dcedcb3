// The aimock importer (`faultline cassette import --aimock`) on any text, in the dialect and with
// the chunk size the input's hash draws: cassette_import_fuzz.h's properties.
#include <cstddef>
#include <cstdint>

#include "cassette_import/aimock_import.h"
#include "cassette_import/fuzz/cassette_import_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace faultline::scenario;
  namespace rf = faultline::ref::fuzz;
  const std::string_view text = rf::AsText(data, size);
  const std::uint64_t hash = rf::Hash(text);
  AimockOptions options;
  options.dialect = hash % 2 == 0 ? Dialect::kOpenAiChat : Dialect::kAnthropicMessages;
  options.chunk_size = 1 + static_cast<int>((hash >> 8) % 40);
  options.latency_ms = static_cast<double>((hash >> 16) % 50);
  const auto import = ImportAimock(text, "fuzz.json", options);
  fuzz::CheckImport(import, ImportAimock(text, "fuzz.json", options), text);
  return 0;
}
