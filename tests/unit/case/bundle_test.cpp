// The bundle writer round-trips through results::Db in the results schema.
#include <gtest/gtest.h>

#include <filesystem>
#include <utility>
#include <vector>

#include "harness/case/run/bundle.hpp"
#include "results/db.hpp"
#include "tests/common/case_bundle.hpp"

TEST(Bundle, WritesEveryTableOnce) {
  auto dir = std::filesystem::temp_directory_path() / ("hk_case_bundle_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto path = (dir / "c1.db").string();
  auto b = test_support::completed_bundle("c1", "smoke", "fast-structured", "bounded-reclaim");
  b.repeat = 1;
  b.dose_bytes = 96ll << 20;
  b.page_size_bytes = 4096;
  b.phases = {{"warmup", 10, 20}, {"pressure", 20, 30}, {"recovery", 30, 40}, {"restoration", 40, 50}};
  b.requests = {{"compute", 0, 10, 11, 12, 1, 0, 0, 0}, {"sqlite", 0, 10, 11, std::nullopt, 1, 0, 0, 0}};
  harness::case_::TelemetrySample t;
  t.t_ns = 20;
  t.phase = "pressure";
  t.bg_some_us = 1234;
  t.extra["errors"] = {{"zram", "ENOENT"}};
  b.telemetry = {t};
  b.events = {{21, "window", 1234, 1000, 1, 1, nullptr}, {22, "trigger", std::nullopt, std::nullopt, std::nullopt, std::nullopt, {{"a", 1}}}};
  harness::case_::ReclaimRow r;
  r.requested_bytes = 96ll << 20;
  r.start_ns = 22;
  r.end_ns = 25;
  r.pgsteal_before = 1;
  r.achieved_bytes = 4096;
  b.reclaims = {r};
  b.restoration = harness::case_::RestorationRow{40, 50, true, {{"steps", 1}}};
  b.artifacts = {{"pressure-gen.json", "{}"}};
  harness::case_::write_bundle(path, b);
  harness::case_::write_bundle(path, b);  // replaces, does not append

  results::Db db(path, results::Db::Mode::ReadOnly);
  auto count = [&](const char* table) {
    results::Stmt s(db, std::string("SELECT COUNT(*) FROM ") + table);
    EXPECT_TRUE(s.step());
    return s.int64(0);
  };
  EXPECT_EQ(count("cases"), 1);
  EXPECT_EQ(count("phases"), 4);
  EXPECT_EQ(count("canary_requests"), 2);
  EXPECT_EQ(count("telemetry"), 1);
  EXPECT_EQ(count("controller_events"), 2);
  EXPECT_EQ(count("reclaim_actions"), 1);
  EXPECT_EQ(count("restoration"), 1);
  EXPECT_EQ(count("artifacts"), 1);
  results::Stmt s(db, "SELECT duration_ns, pgsteal_after, achieved_bytes FROM reclaim_actions");
  ASSERT_TRUE(s.step());
  EXPECT_EQ(s.int64(0), 3);
  EXPECT_TRUE(s.is_null(1));  // not measured -> NULL, never 0
  EXPECT_EQ(s.int64(2), 4096);
  results::Stmt q(db, "SELECT completion_ns FROM canary_requests WHERE canary='sqlite'");
  ASSERT_TRUE(q.step());
  EXPECT_TRUE(q.is_null(0));
  results::Stmt tq(db, "SELECT bg_some_us, bg_full_us, extra_json FROM telemetry");
  ASSERT_TRUE(tq.step());
  EXPECT_EQ(tq.int64(0), 1234);
  EXPECT_TRUE(tq.is_null(1));
  EXPECT_NE(tq.text(2).find("ENOENT"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(Bundle, WritesTheVersion2Columns) {
  auto dir = std::filesystem::temp_directory_path() / ("hk_case_bundle_v2_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto path = (dir / "c2.db").string();
  auto b = test_support::completed_bundle("c2", "smoke", "r", "bounded-reclaim");
  b.source_commit = std::string(40, 'a');
  b.source_dirty = 1;
  harness::case_::TelemetrySample t;
  t.t_ns = 1'025'000'000;
  t.read_ns = 1'025'300'000;
  t.steal_us = 12'340'000;
  harness::case_::TelemetrySample u;
  u.t_ns = 2'025'000'000;  // nothing read: NULLs
  b.telemetry = {t, u};
  harness::case_::ControllerEvent w{2'025'000'000, "window", 5000, 3000, 0, 0, nullptr, 2'000'000'000, 1};
  b.events = {w};
  harness::case_::ReclaimRow r;
  r.requested_bytes = 96ll << 20;
  r.start_ns = 3;
  r.end_ns = 5;
  r.achieved_bytes = 122'880'000;
  r.achieved_counter = "pgsteal";
  r.concurrent_estimate_bytes = 18'022'400;
  r.achieved_conservative_bytes = 104'857'600;
  r.achieved_settled_bytes = 126'976'000;
  b.reclaims = {r};
  harness::case_::write_bundle(path, b);

  results::Db db(path, results::Db::Mode::ReadOnly);
  results::Stmt c(db, "SELECT source_commit, source_dirty FROM cases");
  ASSERT_TRUE(c.step());
  EXPECT_EQ(c.text(0), std::string(40, 'a'));
  EXPECT_EQ(c.int64(1), 1);
  results::Stmt tq(db, "SELECT read_ns, steal_us FROM telemetry ORDER BY t_ns");
  ASSERT_TRUE(tq.step());
  EXPECT_EQ(tq.int64(0), 1'025'300'000);
  EXPECT_EQ(tq.int64(1), 12'340'000);
  ASSERT_TRUE(tq.step());
  EXPECT_TRUE(tq.is_null(0));
  EXPECT_TRUE(tq.is_null(1));
  results::Stmt e(db, "SELECT window_ns, irregular, counting FROM controller_events");
  ASSERT_TRUE(e.step());
  EXPECT_EQ(e.int64(0), 2'000'000'000);
  EXPECT_EQ(e.int64(1), 1);
  EXPECT_EQ(e.int64(2), 0);
  results::Stmt q(db,
                  "SELECT achieved_bytes, achieved_counter, concurrent_estimate_bytes, achieved_conservative_bytes, "
                  "achieved_settled_bytes FROM reclaim_actions");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(0), 122'880'000);
  EXPECT_EQ(q.text(1), "pgsteal");
  EXPECT_EQ(q.int64(2), 18'022'400);
  EXPECT_EQ(q.int64(3), 104'857'600);
  EXPECT_EQ(q.int64(4), 126'976'000);
  std::filesystem::remove_all(dir);
}

// Every telemetry field and every reclaim figure lands in the column of its own name: each is
// given a value no other field has and read back by column name (a swapped bind is caught).
TEST(Bundle, EveryTelemetryAndReclaimFieldLandsInItsOwnColumn) {
  using harness::case_::ReclaimRow;
  using harness::case_::TelemetrySample;
  using Opt = TelemetrySample::Opt;
  const std::vector<std::pair<const char*, Opt TelemetrySample::*>> telemetry = {
      {"bg_some_us", &TelemetrySample::bg_some_us}, {"bg_full_us", &TelemetrySample::bg_full_us},
      {"fg_some_us", &TelemetrySample::fg_some_us}, {"fg_full_us", &TelemetrySample::fg_full_us},
      {"sys_some_us", &TelemetrySample::sys_some_us}, {"sys_full_us", &TelemetrySample::sys_full_us},
      {"bg_current_bytes", &TelemetrySample::bg_current_bytes}, {"fg_current_bytes", &TelemetrySample::fg_current_bytes},
      {"bg_swap_current_bytes", &TelemetrySample::bg_swap_current_bytes},
      {"fg_swap_current_bytes", &TelemetrySample::fg_swap_current_bytes}, {"bg_pgsteal", &TelemetrySample::bg_pgsteal},
      {"bg_pgscan", &TelemetrySample::bg_pgscan},
      {"bg_workingset_refault_anon", &TelemetrySample::bg_workingset_refault_anon},
      {"bg_workingset_refault_file", &TelemetrySample::bg_workingset_refault_file},
      {"bg_pgmajfault", &TelemetrySample::bg_pgmajfault}, {"fg_pgsteal", &TelemetrySample::fg_pgsteal},
      {"fg_pgscan", &TelemetrySample::fg_pgscan},
      {"fg_workingset_refault_anon", &TelemetrySample::fg_workingset_refault_anon},
      {"fg_workingset_refault_file", &TelemetrySample::fg_workingset_refault_file},
      {"fg_pgmajfault", &TelemetrySample::fg_pgmajfault}, {"bg_oom", &TelemetrySample::bg_oom},
      {"bg_oom_kill", &TelemetrySample::bg_oom_kill}, {"fg_oom", &TelemetrySample::fg_oom},
      {"fg_oom_kill", &TelemetrySample::fg_oom_kill}, {"pswpin", &TelemetrySample::pswpin},
      {"pswpout", &TelemetrySample::pswpout}, {"zram_orig_data_bytes", &TelemetrySample::zram_orig_data_bytes},
      {"zram_compr_data_bytes", &TelemetrySample::zram_compr_data_bytes},
      {"zram_mem_used_bytes", &TelemetrySample::zram_mem_used_bytes},
      {"zram_swap_used_kib", &TelemetrySample::zram_swap_used_kib},
      {"swapfile_used_kib", &TelemetrySample::swapfile_used_kib}, {"read_ns", &TelemetrySample::read_ns},
      {"steal_us", &TelemetrySample::steal_us}, {"bg_cpu_some_us", &TelemetrySample::bg_cpu_some_us},
      {"bg_cpu_full_us", &TelemetrySample::bg_cpu_full_us}, {"bg_io_some_us", &TelemetrySample::bg_io_some_us},
      {"bg_io_full_us", &TelemetrySample::bg_io_full_us}, {"fg_cpu_some_us", &TelemetrySample::fg_cpu_some_us},
      {"fg_cpu_full_us", &TelemetrySample::fg_cpu_full_us}, {"fg_io_some_us", &TelemetrySample::fg_io_some_us},
      {"fg_io_full_us", &TelemetrySample::fg_io_full_us}, {"sys_cpu_some_us", &TelemetrySample::sys_cpu_some_us},
      {"sys_cpu_full_us", &TelemetrySample::sys_cpu_full_us}, {"sys_io_some_us", &TelemetrySample::sys_io_some_us},
      {"sys_io_full_us", &TelemetrySample::sys_io_full_us}, {"kswapd_cpu_us", &TelemetrySample::kswapd_cpu_us},
      {"bg_cpu_usage_us", &TelemetrySample::bg_cpu_usage_us}, {"bg_cpu_system_us", &TelemetrySample::bg_cpu_system_us},
      {"fg_cpu_usage_us", &TelemetrySample::fg_cpu_usage_us}, {"fg_cpu_system_us", &TelemetrySample::fg_cpu_system_us}};
  using ROpt = std::optional<std::int64_t>;
  const std::vector<std::pair<const char*, ROpt ReclaimRow::*>> reclaim = {
      {"pgsteal_before", &ReclaimRow::pgsteal_before}, {"pgsteal_after", &ReclaimRow::pgsteal_after},
      {"pgsteal_settled", &ReclaimRow::pgsteal_settled}, {"pgscan_before", &ReclaimRow::pgscan_before},
      {"pgscan_after", &ReclaimRow::pgscan_after}, {"pgscan_settled", &ReclaimRow::pgscan_settled},
      {"bg_current_before_bytes", &ReclaimRow::bg_current_before_bytes},
      {"bg_current_after_bytes", &ReclaimRow::bg_current_after_bytes}, {"achieved_bytes", &ReclaimRow::achieved_bytes},
      {"concurrent_estimate_bytes", &ReclaimRow::concurrent_estimate_bytes},
      {"achieved_conservative_bytes", &ReclaimRow::achieved_conservative_bytes},
      {"achieved_settled_bytes", &ReclaimRow::achieved_settled_bytes}, {"write_cpu_us", &ReclaimRow::write_cpu_us}};
  auto b = test_support::completed_bundle("c3", "smoke", "r", "bounded-reclaim");
  TelemetrySample t;
  t.t_ns = 7;
  t.phase = "pressure";
  for (std::size_t i = 0; i < telemetry.size(); ++i) t.*telemetry[i].second = 1000 + static_cast<std::int64_t>(i);
  b.telemetry = {t};
  ReclaimRow r;
  r.requested_bytes = 11;
  r.start_ns = 20;
  r.end_ns = 27;
  r.write_errno = 12;
  for (std::size_t i = 0; i < reclaim.size(); ++i) r.*reclaim[i].second = 2000 + static_cast<std::int64_t>(i);
  b.reclaims = {r};
  auto dir = std::filesystem::temp_directory_path() / ("hk_case_bundle_cols_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = (dir / "c3.db").string();
  harness::case_::write_bundle(path, b);

  results::Db db(path, results::Db::Mode::ReadOnly);
  auto column = [&](const std::string& table, const std::string& name) {
    results::Stmt s(db, "SELECT " + name + " FROM " + table);
    EXPECT_TRUE(s.step()) << table;
    return s.opt_int64(0);
  };
  for (std::size_t i = 0; i < telemetry.size(); ++i)
    EXPECT_EQ(column("telemetry", telemetry[i].first), 1000 + static_cast<std::int64_t>(i)) << telemetry[i].first;
  EXPECT_EQ(column("telemetry", "t_ns"), 7);
  for (std::size_t i = 0; i < reclaim.size(); ++i)
    EXPECT_EQ(column("reclaim_actions", reclaim[i].first), 2000 + static_cast<std::int64_t>(i)) << reclaim[i].first;
  EXPECT_EQ(column("reclaim_actions", "requested_bytes"), 11);
  EXPECT_EQ(column("reclaim_actions", "start_ns"), 20);
  EXPECT_EQ(column("reclaim_actions", "end_ns"), 27);
  EXPECT_EQ(column("reclaim_actions", "duration_ns"), 7);
  EXPECT_EQ(column("reclaim_actions", "write_errno"), 12);
  std::filesystem::remove_all(dir);
}
