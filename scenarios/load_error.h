// A scenario-format error: where in which file, at which JSON path, and what was wrong. The one
// error value of every loader of the format (scenario files, fleet files, a scenario's policy).
// Values only.
#pragma once

#include <string>

namespace faultline::scenario {

struct LoadError {
  std::string file;         // as given by the caller
  int line = 0;             // 1-based; 0 when unknown (e.g. the file could not be read)
  int column = 0;           // 1-based; 0 when unknown
  std::string path;         // JSON path of the offending field, "" for the document itself
  std::string message;      // what was wrong and what was expected
  bool over_limit = false;  // the text exceeds ParseLimits (too deep, too many keys)
  // "file:line:column: at responses[1].status: expected an integer from 100 to 599, got \"abc\""
  std::string ToString() const;
};

}  // namespace faultline::scenario
