// Trace import (harness/case/run/trace_import.hpp) over work dirs the test writes: a finished
// canary's trace, a killed canary's journal, a canary that left nothing (an infra failure
// unless fg saw an OOM kill), and the workloads' stdout/stderr as artifacts.
#include <gtest/gtest.h>

#include <fstream>

#include "canaries/trace_file.hpp"
#include "harness/case/run/trace_import.hpp"
#include "tests/unit/kernel/tmp_tree.hpp"

namespace {

constexpr std::int64_t kOrigin = 5'000'000'000, kPeriod = 100'000'000;

std::vector<canaries::TraceRecord> records(int n, bool last_unfinished = false) {
  std::vector<canaries::TraceRecord> out;
  for (int i = 0; i < n; ++i) {
    const std::int64_t s = kOrigin + i * kPeriod;
    out.push_back({static_cast<std::uint64_t>(i), s, s + 300'000, s + 2'000'000, 10 + i, i % 2, 1, 0});
  }
  if (last_unfinished && !out.empty()) out.back().completion_ns = 0;
  return out;
}

/// The children as the executor left them: `names` spawned, their output in `dir`.
std::vector<harness::case_::ChildRecord> children(const kernel_test::TmpTree& t, std::initializer_list<const char*> names) {
  std::vector<harness::case_::ChildRecord> out;
  for (const char* n : names) {
    harness::case_::ChildRecord c;
    c.name = n;
    c.stdout_path = (t.dir() / (std::string(n) + ".stdout")).string();
    c.stderr_path = (t.dir() / (std::string(n) + ".stderr")).string();
    out.push_back(c);
  }
  return out;
}

}  // namespace

TEST(TraceImport, AFinishedTraceBecomesRowsAndCounts) {
  kernel_test::TmpTree t;
  canaries::write_trace((t.dir() / "canary-compute.trace").string(), {"compute", kPeriod, kOrigin, 4}, records(3, true));
  canaries::write_trace((t.dir() / "canary-sqlite.trace").string(), {"sqlite", kPeriod, kOrigin + 50'000'000, 0},
                        records(2));
  t.put("canary-compute.stdout", "{\"requests\": 3}\n");
  t.put("canary-compute.stderr", "");
  t.put("pressure-gen.stdout", "{\"allocated_mib\": 320}\n");
  t.put("pressure-gen.stderr", "warning: slow\n");
  const auto kids = children(t, {"canary-compute", "canary-sqlite", "pressure-gen"});
  const auto r = harness::case_::import_traces(kids, t.dir().string(), 0);

  EXPECT_FALSE(r.failure);
  ASSERT_EQ(r.requests.size(), 5u);
  EXPECT_EQ(r.requests[0].canary, "compute");
  EXPECT_EQ(r.requests[0].seq, 0);
  EXPECT_EQ(r.requests[0].scheduled_ns, kOrigin);
  EXPECT_EQ(r.requests[0].wake_ns, kOrigin + 300'000);
  EXPECT_EQ(r.requests[0].completion_ns, kOrigin + 2'000'000);
  EXPECT_EQ(r.requests[1].minflt, 11);
  EXPECT_EQ(r.requests[2].completion_ns, std::nullopt) << "completion 0 = never completed: NULL";
  EXPECT_EQ(r.requests[3].canary, "sqlite");
  ASSERT_EQ(r.counts.size(), 2u);
  const auto& c = r.counts.at("compute");
  EXPECT_FALSE(c.error);
  EXPECT_EQ(c.requests, 3u);
  EXPECT_EQ(c.not_recorded, 4u);
  EXPECT_EQ(c.origin_ns, kOrigin);
  EXPECT_EQ(c.period_ns, kPeriod);
  EXPECT_FALSE(c.from_journal);
  EXPECT_EQ(r.counts.at("sqlite").origin_ns, kOrigin + 50'000'000);
  // stdout of every workload as <name>.json, stderr only when not empty.
  std::vector<std::string> names;
  for (const auto& [n, text] : r.artifacts) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"canary-compute.json", "pressure-gen.json", "pressure-gen.stderr"}));
  EXPECT_EQ(r.artifacts[2].second, "warning: slow\n");
}

TEST(TraceImport, AKilledCanarysJournalKeepsEveryFinishedRequest) {
  kernel_test::TmpTree t;
  // No final trace: the canary was killed; its journal holds two whole records and a torn third.
  std::string journal = canaries::encode_journal_header({"compute", kPeriod, kOrigin, 0});
  for (const auto& rec : records(2)) {
    unsigned char b[canaries::kTraceRecordBytes];
    canaries::encode_record(rec, b);
    journal.append(reinterpret_cast<const char*>(b), sizeof b);
  }
  journal.append(17, '\x01');
  t.put("canary-compute.trace.partial", journal);
  const auto r = harness::case_::import_traces(children(t, {"canary-compute"}), t.dir().string(), 0);
  EXPECT_FALSE(r.failure);
  EXPECT_EQ(r.requests.size(), 2u);
  ASSERT_EQ(r.counts.count("compute"), 1u);
  const auto& c = r.counts.at("compute");
  EXPECT_TRUE(c.from_journal);
  EXPECT_NE(c.trace_error.find("canary-compute.trace"), std::string::npos) << c.trace_error;
  EXPECT_EQ(c.requests, 2u);
  EXPECT_EQ(r.counts.count("sqlite"), 0u) << "a canary that was never started has no entry";
}

TEST(TraceImport, NoTraceAtAllIsAFailureUnlessFgSawAnOomKill) {
  kernel_test::TmpTree t;
  const auto kids = children(t, {"canary-compute", "canary-sqlite"});
  for (std::optional<std::int64_t> kills : {std::optional<std::int64_t>(0), std::optional<std::int64_t>()}) {
    const auto r = harness::case_::import_traces(kids, t.dir().string(), kills);
    ASSERT_TRUE(r.failure);
    // The first canary's failure is the reason; both are recorded.
    EXPECT_EQ(r.failure->rfind("canary-compute left no readable trace (", 0), 0u) << *r.failure;
    EXPECT_NE(r.failure->find("and fg saw no OOM kill"), std::string::npos);
    ASSERT_TRUE(r.counts.at("compute").error);
    ASSERT_TRUE(r.counts.at("sqlite").error);
    EXPECT_TRUE(r.requests.empty());
  }
  const auto oom = harness::case_::import_traces(kids, t.dir().string(), 1);
  EXPECT_FALSE(oom.failure) << "an OOM-killed canary may leave nothing: an outcome";
  EXPECT_TRUE(oom.counts.at("compute").error);
}
