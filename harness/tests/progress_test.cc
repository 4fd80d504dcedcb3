// The console progress: the live line keeps counting between completions, CI logs get a
// heartbeat, failures end with their reproduce command.
#include "harness/cli/progress.h"

#include <gtest/gtest.h>

#include <mutex>
#include <sstream>
#include <thread>

namespace faultline::cli {
namespace {

using namespace std::chrono_literals;

// A stream that the printer's threads may write while the test reads it (recursive: xsputn may
// call overflow).
class LockedBuffer : public std::stringbuf {
 public:
  std::string Text() {
    std::lock_guard lock(mutex_);
    return str();
  }

 protected:
  std::streamsize xsputn(const char* text, std::streamsize n) override {
    std::lock_guard lock(mutex_);
    return std::stringbuf::xsputn(text, n);
  }
  int_type overflow(int_type c) override {
    std::lock_guard lock(mutex_);
    return std::stringbuf::overflow(c);
  }

 private:
  std::recursive_mutex mutex_;
};

std::size_t Count(const std::string& text, std::string_view needle) {
  std::size_t count = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

// Waits (bounded) until `done` holds for the buffer's text.
bool WaitFor(LockedBuffer& buffer, const std::function<bool(const std::string&)>& done) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!done(buffer.Text())) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

report::ScenarioResult Finished(report::Verdict verdict) {
  report::ScenarioResult result;
  result.name = "demo/x";
  result.world = "virtual";
  result.verdict = verdict;
  return result;
}

TEST(ProgressTest, TheLiveLineRefreshesBetweenCompletions) {
  LockedBuffer buffer;
  std::ostream err(&buffer);
  const report::ScenarioResult pass = Finished(report::Verdict::kPass);
  {
    ProgressPrinter printer(err, {.live = true, .refresh = 10ms}, {}, 3);
    printer({.done = 1,
             .total = 3,
             .failed = 0,
             .finished = &pass,
             .slowest_running = "stall/slow",
             .slowest_since = std::chrono::steady_clock::now()});
    // No further completion: the ticker alone redraws the line, in place.
    EXPECT_TRUE(WaitFor(buffer, [](const std::string& text) {
      return Count(text, "\r\033[K[1/3] 0 failed") >= 4;
    })) << buffer.Text();
  }
  EXPECT_NE(buffer.Text().find("slowest running: stall/slow ("), std::string::npos);
  EXPECT_EQ(buffer.Text().back(), '\n') << "the live line ends before anything else prints";
}

TEST(ProgressTest, CiLogsGetAHeartbeatAndFailuresTheirReproduceCommand) {
  LockedBuffer buffer;
  std::ostream err(&buffer);
  report::RunResult context;
  context.seed = 9;
  context.subject = "faultline-ref 0.1.0 (in-process)";
  const report::ScenarioResult fail = Finished(report::Verdict::kFail);
  ProgressPrinter printer(err, {.heartbeat = 20ms}, context, 2);
  printer({.done = 1, .total = 2, .failed = 1, .finished = &fail});
  EXPECT_TRUE(WaitFor(buffer, [](const std::string& text) {
    return Count(text, "[1/2] 1 failed") >= 2;  // the completion's, then the heartbeat's
  })) << buffer.Text();
  const std::string text = buffer.Text();
  EXPECT_NE(text.find("fail demo/x [virtual] 0 ms\n      reproduce: faultline run --filter demo/x "
                      "--seed 9 --time virtual\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find('\r'), std::string::npos) << "no terminal control in a log";
}

// A run whose subject was stopped at its timeout is judged afterwards: the line says it is being
// judged and how long its subject ran, never "running" for time the subject did not have.
TEST(ProgressTest, ARunWhoseSubjectEndedIsJudgingNotRunning) {
  LockedBuffer buffer;
  std::ostream err(&buffer);
  const auto now = std::chrono::steady_clock::now();
  ProgressPrinter printer(err, {.heartbeat = 10ms}, {}, 2);
  printer({.done = 0,
           .total = 2,
           .failed = 0,
           .finished = nullptr,  // an update between completions: no line of its own
           .slowest_running = "stall/slow",
           .slowest_since = now - 30s,
           .slowest_judging = true,
           .slowest_judged_since = now});
  EXPECT_TRUE(WaitFor(buffer, [](const std::string& text) {
    return text.find("slowest: stall/slow, judging for ") != std::string::npos;
  })) << buffer.Text();
  const std::string text = buffer.Text();
  EXPECT_NE(text.find("(its subject ran 30.0 s)"), std::string::npos) << text;
  EXPECT_EQ(text.find("slowest running"), std::string::npos) << text;
  EXPECT_EQ(text.find("demo/"), std::string::npos) << "no run line without a finished run";
}

}  // namespace
}  // namespace faultline::cli
