// The JSON Schemas, embedded in the binary at build time (cmake/embed_schemas.cmake) from their
// one home each: scenarios/schema/, reference_impl/schema/, reports/schema/ and harness/schema/.
// The runner validates adapter lines against "protocol"; `faultline schema` prints any of them.
//
// Thread-safety: constant data.
#pragma once

#include <string_view>

namespace faultline::harness {

// The schema called `name` ("scenario", "policy", "result", "protocol", "config"); empty for
// another name.
std::string_view EmbeddedSchema(std::string_view name);

}  // namespace faultline::harness
