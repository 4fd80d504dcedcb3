// The HAR importer (`faultline cassette import --har`) on any text: cassette_import_fuzz.h's
// properties.
#include <cstddef>
#include <cstdint>

#include "cassette_import/fuzz/cassette_import_fuzz.h"
#include "cassette_import/har_import.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace faultline::scenario;
  const std::string_view text = faultline::ref::fuzz::AsText(data, size);
  const auto import = ImportHar(text, "fuzz.har");
  fuzz::CheckImport(import, ImportHar(text, "fuzz.har"), text);
  return 0;
}
