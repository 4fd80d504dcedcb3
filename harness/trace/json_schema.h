// A JSON Schema (draft 2020-12) validator for the keywords faultline's own schemas use, so that a
// shipped schema file is the one home of a format the runner enforces (the adapter protocol:
// harness/schema/adapter-protocol.schema.json).
//
// A schema is compiled once: every keyword outside the subset below is refused at Compile (a
// schema that says more than the validator checks would pass what it forbids), and every $ref
// is resolved then. Supported: type, const, enum, minimum, maximum, minLength, properties,
// required, additionalProperties (false or a schema), dependentRequired, items, allOf, anyOf,
// oneOf, if/then/else, $ref to "#..." JSON pointers, $defs, boolean schemas; annotations
// ($schema, $id, $comment, title, description, default, examples) are ignored.
//
// Bounded: validation walks at most kMaxDepth levels of schema and value together and reports
// deeper nesting as a violation, never recursing further, so a hostile value costs bounded stack
// (the caller bounds its nesting before it is parsed at all: nlohmann's parser, dump and
// destructor recurse). An "integer" is a JSON integer literal (1, not 1.0), and a number must be
// finite.
//
// Thread-safety: a compiled JsonSchema is immutable; Validate is safe from any thread.
#pragma once

#include <cstddef>
#include <expected>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "nlohmann/json.hpp"

namespace faultline::harness {

// One way a value breaks a schema.
struct SchemaViolation {
  // Where, as a path into the value: "attempt", "failure.class", "tool_calls[0].id"; "" for the
  // value itself.
  std::string path;
  // What: "expected an integer, got the string \"1\"", "missing required field \"commitment\"".
  std::string message;
  // "at attempt: expected ...", or just the message at the value itself.
  std::string ToString() const;
};

class JsonSchema {
 public:
  static constexpr int kMaxDepth = 128;

  // Compiles a schema document; the error names the JSON pointer of what is not supported.
  static std::expected<JsonSchema, std::string> Compile(const nlohmann::json& document);

  JsonSchema(JsonSchema&&) noexcept;
  JsonSchema& operator=(JsonSchema&&) noexcept;
  ~JsonSchema();

  // The JSON pointer of the definition called `name`: "/$defs/adapter~1hello".
  static std::string DefinitionPointer(std::string_view name);

  // Whether `pointer` ("" the root, "/$defs/adapter~1hello") names a subschema.
  bool Has(std::string_view pointer) const;

  // The violations of `value` against the subschema at `pointer` (empty: valid), in the order
  // the schema lists its checks, at most `max` of them. An unknown pointer is one violation.
  std::vector<SchemaViolation> Validate(const nlohmann::json& value, std::string_view pointer = "",
                                        std::size_t max = 3) const;

 private:
  struct Node;
  class Compiler;
  class Checker;
  JsonSchema();

  std::vector<Node> nodes_;
  std::map<std::string, int, std::less<>> by_pointer_;
};

}  // namespace faultline::harness
