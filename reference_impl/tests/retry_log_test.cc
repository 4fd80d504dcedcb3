#include "reference_impl/retry_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace faultline::ref {
namespace {

using std::chrono::milliseconds;
using std::chrono::system_clock;

const system_clock::time_point kT0 = system_clock::time_point(milliseconds(1'732'900'000'123));

RetryLogRecord Record(std::string call_id, int attempt, long offset_ms = 0) {
  return {RetryLogRecord::Kind::kRetry,  std::move(call_id), attempt,
          kT0 + milliseconds(offset_ms), milliseconds(1500), DelaySource::kRetryAfter,
          FailureCode::kRateLimit};
}

class RetryLogFileTest : public testing::Test {
 protected:
  void SetUp() override {
    const auto* info = testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("faultline-retry-log-" + std::to_string(::getpid()) + "-" + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = dir_ / "retries.jsonl";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  RetryLog OpenLog(bool fsync = false) {
    auto storage = FileRetryLogStorage::Open(path_, fsync);
    EXPECT_TRUE(storage) << storage.error();
    return RetryLog(std::move(*storage));
  }

  std::string FileContents() const {
    std::ifstream in(path_, std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
  }

  void WriteFile(std::string_view contents) const {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out << contents;
  }

  std::filesystem::path dir_;
  std::filesystem::path path_;
};

TEST(RetryLogFormatTest, OneJsonLinePerRecord) {
  EXPECT_EQ(ToJsonLine(Record("c-42", 2)),
            R"({"attempt":2,"call_id":"c-42","delay_ms":1500,"delay_source":"retry-after",)"
            R"("failure_code":"RATE_LIMIT","scheduled_at_ms":1732900000123})");
}

TEST(RetryLogFormatTest, AnAttemptLineSaysWhenItStarted) {
  const RetryLogRecord started{
      .kind = RetryLogRecord::Kind::kAttempt, .call_id = "c-42", .attempt = 3, .scheduled_at = kT0};
  const std::string line = ToJsonLine(started);
  EXPECT_EQ(line, R"({"attempt":3,"call_id":"c-42","started_at_ms":1732900000123})");
  const RecoveredCall call =
      RecoverFromLog(ToJsonLine(Record("c-42", 2)) + "\n" + line + "\n", "c-42");
  EXPECT_EQ(call.records, 2u);
  EXPECT_EQ(call.retries, 2);
  EXPECT_EQ(call.attempts_started, 3);
  EXPECT_EQ(call.last_failure_code, FailureCode::kRateLimit);  // the last retry line's
  // A line with both times, or neither, is no record.
  EXPECT_EQ(RecoverFromLog(R"({"call_id":"c","attempt":1,"started_at_ms":1,"scheduled_at_ms":1})"
                           "\n",
                           "c")
                .invalid_lines,
            1u);
}

TEST(RetryLogRecoverTest, CountsRetriesPerCall) {
  std::string log;
  for (const RetryLogRecord& record :
       {Record("c1", 1, 0), Record("c2", 1, 10), Record("c1", 2, 2000), Record("c1", 3, 5000)}) {
    log += ToJsonLine(record) + "\n";
  }
  const RecoveredCall c1 = RecoverFromLog(log, "c1");
  EXPECT_EQ(c1.retries, 3);
  EXPECT_EQ(c1.records, 3u);
  EXPECT_EQ(c1.last_scheduled_at, kT0 + milliseconds(5000));
  EXPECT_EQ(c1.torn_lines, 0u);
  EXPECT_EQ(RecoverFromLog(log, "c2").retries, 1);
  const RecoveredCall unknown = RecoverFromLog(log, "c3");
  EXPECT_EQ(unknown.retries, 0);
  EXPECT_EQ(unknown.last_scheduled_at, std::nullopt);
  EXPECT_EQ(RecoverFromLog("", "c1").records, 0u);
}

TEST(RetryLogRecoverTest, TornLastLineIsIgnoredAndCounted) {
  const std::string line = ToJsonLine(Record("c1", 1));
  const std::string torn = ToJsonLine(Record("c1", 2, 3000));
  for (std::size_t cut = 1; cut <= torn.size(); ++cut) {  // every cut, even a complete object
    const RecoveredCall call = RecoverFromLog(line + "\n" + torn.substr(0, cut), "c1");
    EXPECT_EQ(call.retries, 1) << "cut " << cut;
    EXPECT_EQ(call.last_scheduled_at, kT0) << "cut " << cut;
    EXPECT_EQ(call.torn_lines, 1u) << "cut " << cut;
  }
}

TEST(RetryLogRecoverTest, BadLinesInTheMiddleAreSkipped) {
  const std::string log = ToJsonLine(Record("c1", 1)) + "\n" + "{\"call_id\":\"c1\",\"att\n" +
                          "\n" + "{\"call_id\":\"c1\"}\n" + "[1,2]\n" +
                          "{\"call_id\":\"c1\",\"attempt\":\"2\",\"scheduled_at_ms\":1}\n" +
                          "{\"call_id\":\"c1\",\"attempt\":0,\"scheduled_at_ms\":1}\n" +
                          ToJsonLine(Record("c1", 2, 100)) + "\n";
  const RecoveredCall call = RecoverFromLog(log, "c1");
  EXPECT_EQ(call.retries, 2);
  EXPECT_EQ(call.records, 2u);
  EXPECT_EQ(call.torn_lines, 1u);
  EXPECT_EQ(call.invalid_lines, 4u);
}

TEST(RetryLogRecoverTest, OptionalFieldsMayBeMissingOrWrong) {
  const RecoveredCall call = RecoverFromLog(
      "{\"call_id\":\"c\",\"attempt\":4,\"scheduled_at_ms\":7,\"delay_ms\":\"x\"}\n", "c");
  EXPECT_EQ(call.retries, 4);
  EXPECT_EQ(call.last_scheduled_at, system_clock::time_point(milliseconds(7)));
}

TEST(RetryLogMemoryTest, RecordThenRecover) {
  auto storage = std::make_unique<MemoryRetryLogStorage>();
  MemoryRetryLogStorage* raw = storage.get();
  RetryLog log(std::move(storage));
  ASSERT_TRUE(log.Record(Record("c1", 1)));
  ASSERT_TRUE(log.Record(Record("c1", 2, 900)));
  EXPECT_EQ(raw->contents.back(), '\n');
  auto call = log.Recover("c1");
  ASSERT_TRUE(call);
  EXPECT_EQ(call->retries, 2);
  EXPECT_EQ(call->last_scheduled_at, kT0 + milliseconds(900));
}

TEST(RetryLogMemoryTest, ConcurrentRecordsStayWholeLines) {
  RetryLog log(std::make_unique<MemoryRetryLogStorage>());
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&log, t] {
      for (int i = 1; i <= 100; ++i) {
        ASSERT_TRUE(log.Record(Record("c" + std::to_string(t), i)));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 8; ++t) {
    auto call = log.Recover("c" + std::to_string(t));
    ASSERT_TRUE(call);
    EXPECT_EQ(call->records, 100u);
    EXPECT_EQ(call->retries, 100);
    EXPECT_EQ(call->torn_lines, 0u);
    EXPECT_EQ(call->invalid_lines, 0u);
  }
}

TEST_F(RetryLogFileTest, ARestartedCallRecoversItsRetries) {
  {
    RetryLog log = OpenLog(/*fsync=*/true);
    ASSERT_TRUE(log.Record(Record("call-1", 1)));
    ASSERT_TRUE(log.Record(Record("call-2", 1, 50)));
    ASSERT_TRUE(log.Record(Record("call-1", 2, 4000)));
  }  // the process "dies"
  RetryLog restarted = OpenLog();
  auto call = restarted.Recover("call-1");
  ASSERT_TRUE(call) << call.error();
  EXPECT_EQ(call->retries, 2);
  EXPECT_EQ(call->last_scheduled_at, kT0 + milliseconds(4000));
  EXPECT_EQ(call->torn_lines, 0u);
  // Appends continue after the earlier records.
  ASSERT_TRUE(restarted.Record(Record("call-1", 3, 9000)));
  EXPECT_EQ(restarted.Recover("call-1")->retries, 3);
  EXPECT_EQ(RecoverFromLog(FileContents(), "call-1").records, 3u);
}

TEST_F(RetryLogFileTest, TornTailOnDiskIsToleratedAndTheNextRecordStartsCleanly) {
  const std::string good = ToJsonLine(Record("c1", 1)) + "\n";
  const std::string torn = ToJsonLine(Record("c1", 2, 3000)).substr(0, 25);
  WriteFile(good + torn);
  {
    // Before reopening: the torn tail is ignored.
    EXPECT_EQ(RecoverFromLog(FileContents(), "c1").torn_lines, 1u);
  }
  RetryLog log = OpenLog();
  auto before = log.Recover("c1");
  ASSERT_TRUE(before);
  EXPECT_EQ(before->retries, 1);
  EXPECT_EQ(before->torn_lines, 1u);
  ASSERT_TRUE(log.Record(Record("c1", 2, 3000)));
  auto after = log.Recover("c1");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->retries, 2);  // the new record was not glued to the fragment
  EXPECT_EQ(after->records, 2u);
  EXPECT_EQ(after->torn_lines, 1u);
  EXPECT_EQ(FileContents(), good + torn + "\n" + ToJsonLine(Record("c1", 2, 3000)) + "\n");
}

TEST_F(RetryLogFileTest, OpeningAFileThatEndsCleanlyAddsNothing) {
  const std::string good = ToJsonLine(Record("c1", 1)) + "\n";
  WriteFile(good);
  RetryLog log = OpenLog();
  EXPECT_EQ(FileContents(), good);
}

TEST_F(RetryLogFileTest, UnopenablePathIsAnError) {
  auto storage = FileRetryLogStorage::Open(dir_ / "missing" / "retries.jsonl", false);
  ASSERT_FALSE(storage);
  EXPECT_NE(storage.error().find("missing/retries.jsonl"), std::string::npos) << storage.error();
}

// ---- Hostile logs ----

TEST(RetryLogHostileTest, ScheduledTimesBeyondTheClockSaturate) {
  // Past year 2262 the ms -> ns conversion overflowed.
  const std::string log = R"({"call_id":"c1","attempt":1,"scheduled_at_ms":9223372036854775807})"
                          "\n"
                          R"({"call_id":"c2","attempt":1,"scheduled_at_ms":-9223372036854775807})"
                          "\n"
                          R"({"call_id":"c3","attempt":1,"scheduled_at_ms":18446744073709551615})"
                          "\n";
  const auto max_time =
      std::chrono::time_point_cast<milliseconds>(std::chrono::system_clock::time_point::max());
  EXPECT_EQ(RecoverFromLog(log, "c1").last_scheduled_at, max_time);
  EXPECT_EQ(RecoverFromLog(log, "c3").last_scheduled_at, max_time);
  const auto min_time = RecoverFromLog(log, "c2").last_scheduled_at;
  ASSERT_TRUE(min_time);
  EXPECT_LT(*min_time, std::chrono::system_clock::time_point());
}

TEST(RetryLogHostileTest, NonUtf8CallIdIsWrittenAndFoundAgain) {
  // json::dump() threw on the id (inside the driver's coroutine, which then hung the call).
  const std::string id = "call-\xff\xfe-1";
  std::string line;
  ASSERT_NO_THROW(line = ToJsonLine(Record(id, 2)));
  EXPECT_NE(line.find("call-\xEF\xBF\xBD\xEF\xBF\xBD-1"), std::string::npos) << line;
  const RecoveredCall call = RecoverFromLog(line + "\n", id);
  EXPECT_EQ(call.records, 1u);
  EXPECT_EQ(call.retries, 2);
  EXPECT_EQ(call.last_failure_code, FailureCode::kRateLimit);
}

TEST(RetryLogHostileTest, LastFailureCodeIsTheHighestAttempts) {
  RetryLogRecord second = Record("c1", 2, 100);
  second.failure_code = FailureCode::kOverloaded;
  const std::string log = ToJsonLine(Record("c1", 1)) + "\n" + ToJsonLine(second) + "\n" +
                          ToJsonLine(Record("c1", 1, 50)) + "\n";
  EXPECT_EQ(RecoverFromLog(log, "c1").last_failure_code, FailureCode::kOverloaded);
}

}  // namespace
}  // namespace faultline::ref
