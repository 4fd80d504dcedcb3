// The `faultline` binary: everything lives in the harness library; main only maps the result
// to the exit code.
#include <iostream>

#include "harness/cli/cli.h"

int main(int argc, char** argv) {
  using faultline::cli::ExitCode;
  switch (faultline::cli::Run(argc, argv, std::cout, std::cerr)) {
    case ExitCode::kSuccess:
      return 0;
    case ExitCode::kChecksFailed:
      return 1;
    case ExitCode::kUsageError:
      return 2;
    case ExitCode::kSubjectError:
      return 3;
    case ExitCode::kInterrupted:
      return 4;
    case ExitCode::kReportWriteError:
      return 5;
    case ExitCode::kOutOfResources:
      return 6;
    case ExitCode::kThresholdsCrossed:
      return 99;
  }
  return 2;
}
