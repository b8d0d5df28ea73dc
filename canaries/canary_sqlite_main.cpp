// canary-sqlite: the SQLite canary (study), SQLite embedded in the process.
//   canary-sqlite prepare --db FILE [--rows 80000 --payload-bytes 1536 --seed N]
//   canary-sqlite run --db FILE --period-ms 100 --duration-s S --queries-per-request 8
//                     --trace FILE [--start-at-ns T] [--seed N]
// run: each request issues --queries-per-request indexed point queries on keys of rows
// drawn uniformly at random (boost::random::mt19937_64 seeded with
// --seed ^ 0x71756572792d6b65, boost::random::uniform_int_distribution over [0, rows)).
// Database format and PRAGMAs: canaries/canary_db.hpp. Exit codes: 0 ok (also after
// SIGTERM), 1 run/database error (missing or corrupt database: message, no crash),
// 2 bad arguments (message names the flag).
#include "canaries/canary_db.hpp"
#include "canaries/canary_runner.hpp"
#include "canaries/cli_main.hpp"
#include "canaries/stop_signal.hpp"

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>

#include <iostream>

int main(int argc, char** argv) {
  CLI::App app{"canary-sqlite: periodic indexed point queries on an embedded SQLite database"};
  app.require_subcommand(1);

  canaries::PrepareOptions prep;
  auto* prepare = app.add_subcommand("prepare", "build the canary database (deterministic by seed)");
  prepare->add_option("--db", prep.path, "database file to create (replaced)")->required();
  prepare->add_option("--rows", prep.rows, "rows")->capture_default_str();
  prepare->add_option("--payload-bytes", prep.payload_bytes, "payload bytes per row")->capture_default_str();
  prepare->add_option("--seed", prep.seed, "seed of keys and payloads")->capture_default_str();

  canaries::CanaryOptions opts;
  std::string db_path;
  std::int64_t queries = 8;
  auto* run = app.add_subcommand("run", "run the periodic canary");
  run->add_option("--db", db_path, "database built by `prepare`")->required();
  run->add_option("--queries-per-request", queries, "indexed point queries per request")->capture_default_str();
  canaries::add_run_options(*run, opts);

  if (const auto rc = canaries::parse_flags(app, argc, argv)) return *rc;

  if (*prepare) {
    return canaries::run_main("canary-sqlite prepare", [&] {
      canaries::prepare_database(prep);
      std::cout << nlohmann::json{{"db", prep.path}, {"rows", prep.rows}, {"payload_bytes", prep.payload_bytes},
                                  {"seed", prep.seed}}
                       .dump()
                << std::endl;
      return 0;
    });
  }

  return canaries::run_main("canary-sqlite run", [&] {
    if (queries < 1 || queries > 100000) {
      throw std::invalid_argument("--queries-per-request " + std::to_string(queries) + " must be in [1, 100000]");
    }
    canaries::make_schedule(opts, 0);
    canaries::install_stop_handlers();  // before the database opens: a early SIGTERM still ends cleanly
    canaries::CanaryDb db(db_path);
    boost::random::mt19937_64 eng(opts.seed ^ 0x71756572792d6b65ULL);
    boost::random::uniform_int_distribution<std::uint64_t> pick(0, static_cast<std::uint64_t>(db.rows() - 1));
    std::uint64_t missing = 0, digest = 0;
    return canaries::run_canary(
        "sqlite", opts,
        [&](std::uint64_t) {
          for (std::int64_t q = 0; q < queries; ++q) {
            const auto found = db.lookup(canaries::key_for_row(pick(eng), db.seed()));
            if (found) {
              digest += *found;
            } else {
              ++missing;
            }
          }
        },
        [&](nlohmann::json& j) {
          j["db"] = db_path;
          j["queries_per_request"] = queries;
          j["rows"] = db.rows();                    // from the database's meta (study: 80,000)
          j["payload_bytes"] = db.payload_bytes();  // study: 1,536 B; Table 1 of the report shows both
          j["seed"] = opts.seed;
          j["rows_missing"] = missing;  // > 0 means the database does not match its meta (corrupt)
          j["digest"] = digest;
        });
  });
}
