// Golden DB writer for unit tests (see golden_db.hpp).
#include "golden_db.hpp"

#include "results/db.hpp"
#include "tests/common/temp_dir.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace golden {

std::string temp_db(const std::string& stem) {
  static int n = 0;
  static test_support::TempDir tmp("hk_analysis_unit");  // removed when the test binary exits
  return tmp / fmt::format("{}_{}.db", stem, n++);
}

std::string written_db(const std::string& stem, const std::vector<Case>& cases,
                       const std::vector<std::string>& extra_schedule) {
  const auto path = temp_db(stem);
  write(path, cases, extra_schedule);
  return path;
}

void write(const std::string& path, const std::vector<Case>& cases, const std::vector<std::string>& extra_schedule) {
  results::Db db(path, results::Db::Mode::Create);
  db.transaction([&] {
    results::Stmt ic(db, "INSERT INTO cases(case_id,campaign,vm,regime,repeat,triplet_id,configuration,dose_bytes,status,"
                         "accelerator,page_size_bytes,spec_json,kernel_release,outcome_json) VALUES(?1,'golden',?2,?3,?4,?5,?6,?7,?8,?9,4096,?10,'6.1.0-57-cloud-amd64',?11)");
    results::Stmt ip(db, "INSERT INTO phases(case_id,phase,start_ns,end_ns) VALUES(?1,?2,?3,?4)");
    results::Stmt ir(db, "INSERT INTO canary_requests(case_id,canary,seq,scheduled_ns,wake_ns,completion_ns) VALUES(?1,?2,?3,?4,?5,?6)");
    results::Stmt is(db, "INSERT INTO schedule(case_id,ordinal,vm,regime,repeat,triplet_id,configuration) VALUES(?1,?2,'vm0','r',1,NULL,'static-zram')");
    int ord = 0;
    for (const auto& c : cases) {
      const std::string id = fmt::format("{}-{}-{}-{}", c.vm, c.regime, c.repeat, c.configuration);
      const std::string trip = fmt::format("{}/{}/{}", c.vm, c.regime, c.repeat);
      nlohmann::json spec = {{"case_id", id}, {"vm", c.vm}, {"regime", c.regime}, {"configuration", c.configuration},
                             {"canaries", {{"period_ms", 100}}}, {"phases_s", {{"warmup", 1}, {"pressure", 11}, {"recovery", 1}}},
                             {"pressure", {{"rate_mib_s", 32}, {"contents", "structured"}}}};
      ic.bind(1, id).bind(2, c.vm).bind(3, c.regime).bind(4, c.repeat).bind(5, trip).bind(6, c.configuration);
      c.configuration == "bounded-reclaim" ? ic.bind(7, std::int64_t{100663296}) : ic.bind_null(7);
      ic.bind(8, c.status).bind(9, c.accelerator).bind(10, spec.dump());
      c.outcome_json.empty() ? ic.bind_null(11) : ic.bind(11, c.outcome_json);
      ic.run();
      is.bind(1, id).bind(2, ord++).run();
      if (c.status != "completed") continue;
      const std::int64_t ps = 10'000'000'000, pe = ps + 101LL * 100'000'000;
      ip.bind(1, id).bind(2, "warmup").bind(3, ps - 1'000'000'000).bind(4, ps).run();
      ip.bind(1, id).bind(2, "pressure").bind(3, ps).bind(4, pe).run();
      ip.bind(1, id).bind(2, "recovery").bind(3, pe).bind(4, pe + 1'000'000'000).run();
      ip.bind(1, id).bind(2, "restoration").bind(3, pe + 1'000'000'000).bind(4, pe + 2'000'000'000).run();
      const char* canaries[2] = {"compute", "sqlite"};
      const double p99[2] = {c.compute_p99_us, c.sqlite_p99_us};
      for (int k = 0; k < 2; ++k) {
        const std::int64_t unit_ns = static_cast<std::int64_t>(p99[k] * 1000.0 / 100.0);  // k in ns
        int seq = 0;
        // One warmup and one recovery request with a huge response: outside the phase, ignored.
        ir.bind(1, id).bind(2, canaries[k]).bind(3, seq++).bind(4, ps - 100'000'000).bind(5, ps - 99'000'000)
            .bind(6, ps + 5'000'000'000).run();
        const bool cut = c.truncate_at >= 0 && c.truncate_canary == k;
        for (int i = 0; i < 101; ++i) {
          const std::int64_t sched = ps + i * 100'000'000LL;
          if (cut && (i > c.truncate_at || (i == c.truncate_at && !c.in_flight_at_kill))) break;
          if (cut && i == c.truncate_at) {  // in flight when the canary was killed
            ir.bind(1, id).bind(2, canaries[k]).bind(3, seq++).bind(4, sched).bind(5, sched + 1000).bind_null(6).run();
            break;
          }
          // Shuffle order (i -> value (37 i mod 101) + 1) so sorting is exercised.
          std::int64_t resp = unit_ns * (((37 * i) % 101) + 1);
          ir.bind(1, id).bind(2, canaries[k]).bind(3, seq++).bind(4, sched).bind(5, sched + resp / 4);
          if (c.zero_latency_request && i == 50) resp = 0;
          if (i < c.null_completions) ir.bind_null(6);
          else ir.bind(6, sched + resp);
          ir.run();
        }
        if (!cut) ir.bind(1, id).bind(2, canaries[k]).bind(3, seq++).bind(4, pe).bind(5, pe + 1).bind(6, pe + 9'000'000'000).run();
      }
    }
    for (const auto& id : extra_schedule) is.bind(1, id).bind(2, ord++).run();
  });
}

std::vector<Case> two_strata_three_repeats() {
  std::vector<Case> v;
  for (int rep = 1; rep <= 3; ++rep)
    for (const char* vm : {"vm0", "vm1"}) {
      v.push_back({vm, "r", rep, "static-zram", 10000, 20000});
      v.push_back({vm, "r", rep, "delayed-activation", 12000, 26000});
      v.push_back({vm, "r", rep, "bounded-reclaim", 9000.0 + 100 * rep, 19000});
    }
  return v;
}

}  // namespace golden
