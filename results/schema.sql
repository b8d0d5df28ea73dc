-- Results schema, shared by a case bundle (one case, written by `harness case run`)
-- and the campaign database (every case of a campaign, written by `harness run`).
-- A bundle is imported into a campaign DB by copying its rows in one transaction.
--
-- Clocks and units:
--   *_ns        CLOCK_MONOTONIC nanoseconds of the host that ran the case (the guest),
--               unless the column name says unix (wall clock, ns since the epoch).
--   *_us        microseconds (PSI totals are cumulative stall time in us).
--   *_bytes     bytes; *_kib KiB; *_pages pages (see cases.page_size_bytes).
-- NULL means "not measured / absent in this kernel", never zero.

PRAGMA foreign_keys = ON;

CREATE TABLE IF NOT EXISTS schema_info (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
-- Version 3 added cases.host_uri and cases.overcommitted; version 4 added the cpu and io PSI
-- columns of telemetry and reclaim_actions.write_cpu_us. An older database gets them (NULL
-- for its earlier cases) when it is opened for writing (results/db.cpp migrate).
INSERT OR IGNORE INTO schema_info(key, value) VALUES ('schema_version', '4');

-- One row per case attempt that produced a bundle. In the campaign DB the
-- latest attempt of a case is the one analysed (see attempts for all).
CREATE TABLE IF NOT EXISTS cases (
  case_id            TEXT PRIMARY KEY,   -- [A-Za-z0-9._-]{1,128}
  campaign           TEXT NOT NULL,
  vm                 TEXT NOT NULL,      -- stratum part 1 (e.g. vm0)
  regime             TEXT NOT NULL,      -- stratum part 2 (e.g. fast-structured)
  repeat             INTEGER NOT NULL,   -- repeat identifier within (vm, regime)
  triplet_id         TEXT,               -- matched triplet: same vm, regime, repeat
  configuration      TEXT NOT NULL CHECK (configuration IN
                       ('static-zram','delayed-activation','bounded-reclaim')),
  dose_bytes         INTEGER,            -- memory.reclaim request (bounded-reclaim; pilot)
  attempt            INTEGER NOT NULL DEFAULT 1,
  -- completed: the workload ran (whatever latency, OOM, reclaim errno, restoration);
  -- infra_failed: failed before the pressure phase started (boot, setup, qualification,
  --   transfer): the only status that may be rerun (study);
  -- lost: guest, agent or case lost, or timed out, AFTER the pressure phase started: an
  --   outcome, kept and never rerun automatically (the treatment can hang a guest). A lost
  --   row written by the runner has only spec_json and outcome_json {lost: {...}}.
  status             TEXT NOT NULL CHECK (status IN ('completed','infra_failed','lost')),
  error              TEXT,               -- infra_failed / lost: what went wrong
  accelerator        TEXT,               -- kvm | tcg | real | other hypervisor's name: the hosts file's
                                         -- accelerator: when given, else detected in the guest
  kernel_release     TEXT,               -- uname -r of the guest
  source_commit      TEXT,               -- harness build that ran the case (40 hex)
  source_dirty       INTEGER,            -- 1 when that build had uncommitted changes
  page_size_bytes    INTEGER,
  started_unix_ns    INTEGER,
  ended_unix_ns      INTEGER,
  spec_json          TEXT NOT NULL,      -- the case spec as run (harness/case/SPEC.md)
  environment_json   TEXT,               -- uname, cmdline, THP, swappiness, clocksource, ...
  qualification_json TEXT,               -- `harness qualify --json` report at case start
  outcome_json       TEXT,               -- summary: trigger time, OOM kills, reclaim, restoration
  -- Where the case ran, written by the runner (harness/campaign/campaign_db.hpp RanOn):
  host_uri           TEXT,               -- hypervisor host of its guest: "local:HOSTNAME" (local-qemu),
                                         -- a libvirt URI, a hosts file's hypervisor:; NULL = not known
  overcommitted      INTEGER             -- 1: that host had more guest vCPUs than cores - 1 or more guest
                                         -- memory than available (provider.overcommit: true); 0: within;
                                         -- NULL: not judged (hosts engine, older databases)
);

-- Phase boundaries: warmup, pressure, recovery, restoration.
CREATE TABLE IF NOT EXISTS phases (
  case_id   TEXT NOT NULL REFERENCES cases(case_id) ON DELETE CASCADE,
  phase     TEXT NOT NULL CHECK (phase IN ('warmup','pressure','recovery','restoration')),
  start_ns  INTEGER NOT NULL,
  end_ns    INTEGER,
  PRIMARY KEY (case_id, phase)
);

-- Every scheduled canary request (none skipped: no coordinated omission).
-- wake delay = wake_ns - scheduled_ns; service = completion_ns - wake_ns;
-- response = completion_ns - scheduled_ns; deadline miss = completion_ns > next scheduled start.
-- A request that never completed (canary killed mid-request) has completion_ns NULL.
-- WITHOUT ROWID (new files since 2026-12-03; an older file keeps its rowid table, both read
-- alike): the rows are stored in primary-key order in one b-tree, not in a rowid table plus
-- a key index that repeats the case id, so an import writes each row once and the DB holds
-- about 1.2 instead of 1.9 MB per 9-minute case (docs/DESIGN.md "Runner at fleet scale").
CREATE TABLE IF NOT EXISTS canary_requests (
  case_id       TEXT NOT NULL REFERENCES cases(case_id) ON DELETE CASCADE,
  canary        TEXT NOT NULL CHECK (canary IN ('compute','sqlite')),
  seq           INTEGER NOT NULL,        -- 0-based request index
  scheduled_ns  INTEGER NOT NULL,
  wake_ns       INTEGER,
  completion_ns INTEGER,
  minflt        INTEGER,                 -- getrusage(RUSAGE_THREAD) deltas over the request
  majflt        INTEGER,
  nvcsw         INTEGER,
  nivcsw        INTEGER,
  PRIMARY KEY (case_id, canary, seq)
) WITHOUT ROWID;

-- 1 Hz telemetry, one row per sample (the controller reads the same samples).
-- WITHOUT ROWID, as canary_requests and for the same reason.
CREATE TABLE IF NOT EXISTS telemetry (
  case_id                 TEXT NOT NULL REFERENCES cases(case_id) ON DELETE CASCADE,
  t_ns                    INTEGER NOT NULL,
  phase                   TEXT,
  bg_some_us INTEGER, bg_full_us INTEGER,           -- bg memory.pressure totals
  fg_some_us INTEGER, fg_full_us INTEGER,           -- fg memory.pressure totals
  sys_some_us INTEGER, sys_full_us INTEGER,         -- /proc/pressure/memory totals
  bg_current_bytes INTEGER, fg_current_bytes INTEGER,
  bg_swap_current_bytes INTEGER, fg_swap_current_bytes INTEGER,
  bg_pgsteal INTEGER, bg_pgscan INTEGER,            -- memory.stat, pages
  bg_workingset_refault_anon INTEGER, bg_workingset_refault_file INTEGER,
  bg_pgmajfault INTEGER,
  fg_pgsteal INTEGER, fg_pgscan INTEGER,
  fg_workingset_refault_anon INTEGER, fg_workingset_refault_file INTEGER,
  fg_pgmajfault INTEGER,
  bg_oom INTEGER, bg_oom_kill INTEGER, fg_oom INTEGER, fg_oom_kill INTEGER,  -- memory.events
  pswpin INTEGER, pswpout INTEGER,                  -- /proc/vmstat, pages
  zram_orig_data_bytes INTEGER, zram_compr_data_bytes INTEGER, zram_mem_used_bytes INTEGER,
  zram_swap_used_kib INTEGER,                       -- /proc/swaps row of the zram device
  swapfile_used_kib INTEGER,                        -- /proc/swaps row of the swapfile
  extra_json TEXT,                                  -- anything else sampled (kept, not dropped)
  read_ns INTEGER,                                  -- CLOCK_MONOTONIC when bg memory.pressure was read
  steal_us INTEGER,                                 -- /proc/stat cpu steal, cumulative, us
  -- Version 4: cpu.pressure / io.pressure totals (us) of bg, fg and /proc/pressure/{cpu,io}.
  bg_cpu_some_us INTEGER, bg_cpu_full_us INTEGER, bg_io_some_us INTEGER, bg_io_full_us INTEGER,
  fg_cpu_some_us INTEGER, fg_cpu_full_us INTEGER, fg_io_some_us INTEGER, fg_io_full_us INTEGER,
  sys_cpu_some_us INTEGER, sys_cpu_full_us INTEGER, sys_io_some_us INTEGER, sys_io_full_us INTEGER,
  PRIMARY KEY (case_id, t_ns)
) WITHOUT ROWID;

-- Controller: one row per 1 s window and one per trigger / action / backend event.
CREATE TABLE IF NOT EXISTS controller_events (
  case_id      TEXT NOT NULL REFERENCES cases(case_id) ON DELETE CASCADE,
  t_ns         INTEGER NOT NULL,
  kind         TEXT NOT NULL,   -- window | trigger | would_trigger | backend_on | reclaim_start | reclaim_end | error
  some_total_us INTEGER,        -- bg memory.pressure some total at this tick
  delta_us     INTEGER,         -- increase over the window
  counting     INTEGER,         -- 1 when delta_us >= threshold
  consecutive  INTEGER,         -- counting windows in a row, after this one
  detail_json  TEXT,
  window_ns    INTEGER,         -- real length of the window (read_ns - previous read_ns)
  irregular    INTEGER          -- 1 when window_ns is outside [0.9, 1.1] x window: not judged, resets the run
);

-- The bounded-reclaim action (at most one per case in the study).
CREATE TABLE IF NOT EXISTS reclaim_actions (
  case_id               TEXT NOT NULL REFERENCES cases(case_id) ON DELETE CASCADE,
  requested_bytes       INTEGER NOT NULL,
  start_ns              INTEGER NOT NULL,
  end_ns                INTEGER NOT NULL,
  duration_ns           INTEGER NOT NULL,
  write_errno           INTEGER NOT NULL,   -- 0 = success; EAGAIN = partial / no progress
  pgsteal_before        INTEGER,            -- bg memory.stat pgsteal, pages
  pgsteal_after         INTEGER,            -- right after the write returned
  pgsteal_settled       INTEGER,            -- after the ~2 s memcg stat flush delay
  pgscan_before         INTEGER,
  pgscan_after          INTEGER,
  pgscan_settled        INTEGER,
  bg_current_before_bytes INTEGER,
  bg_current_after_bytes  INTEGER,
  -- Achieved (study: pgsteal x page size) measured across the write itself:
  -- (counter_after - counter_before) * page size, counter = pgsteal_proactive where the
  -- kernel has it, else pgsteal (6.1: limit reclaim running beside the write is included).
  achieved_bytes        INTEGER,
  achieved_counter      TEXT,               -- pgsteal_proactive | pgsteal
  -- Concurrent limit reclaim estimate: bg pgsteal rate over the 3 windows before the
  -- trigger x write duration (bytes). 0 when the counter is pgsteal_proactive.
  concurrent_estimate_bytes INTEGER,
  -- max(0, achieved_bytes - concurrent_estimate_bytes): the conservative figure the pilot
  -- rule and CI assertions use.
  achieved_conservative_bytes INTEGER,
  achieved_settled_bytes INTEGER,           -- (pgsteal_settled - pgsteal_before) * page size (old figure)
  write_cpu_us          INTEGER,            -- version 4: CPU time of the writing thread in write(2), us
  PRIMARY KEY (case_id, start_ns)
);

-- Restoration after the case: stop processes, swapoff, zram reset, cgroups removed.
CREATE TABLE IF NOT EXISTS restoration (
  case_id     TEXT PRIMARY KEY REFERENCES cases(case_id) ON DELETE CASCADE,
  start_ns    INTEGER NOT NULL,
  end_ns      INTEGER NOT NULL,
  clean       INTEGER NOT NULL,   -- 1 = verified: no swap in use, cgroups gone, no stray pids
  detail_json TEXT                -- per step: duration, errno, what was found
);

-- Free-form per-process reports (pressure-gen and canary JSON summaries, logs).
CREATE TABLE IF NOT EXISTS artifacts (
  case_id  TEXT NOT NULL REFERENCES cases(case_id) ON DELETE CASCADE,
  name     TEXT NOT NULL,         -- e.g. pressure-gen.json, canary-compute.json
  content  TEXT NOT NULL,
  PRIMARY KEY (case_id, name)
);

-- ---- campaign database only -------------------------------------------------

-- key/value: campaign name, seed, campaign_yaml, schedule_json, schedule_sha256 (preregistration).
CREATE TABLE IF NOT EXISTS campaign_meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

-- The preregistered schedule: one row per planned case, in execution order per VM.
CREATE TABLE IF NOT EXISTS schedule (
  case_id       TEXT PRIMARY KEY,
  ordinal       INTEGER NOT NULL,   -- global order
  vm            TEXT NOT NULL,
  regime        TEXT NOT NULL,
  repeat        INTEGER NOT NULL,
  triplet_id    TEXT,
  configuration TEXT NOT NULL,
  dose_bytes    INTEGER,
  state         TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending','completed','infra_failed','lost'))
);

-- Every attempt of every case, including infra failures that were retried, and every
-- operator action on a case (audit trail).
CREATE TABLE IF NOT EXISTS attempts (
  case_id          TEXT NOT NULL,
  attempt          INTEGER NOT NULL,
  host             TEXT,
  status           TEXT NOT NULL,   -- completed | infra_failed | lost | marked_infra | reset_infra |
                                    -- running (in flight; replaced by the outcome; left by a killed runner)
  error            TEXT,
  started_unix_ns  INTEGER,
  ended_unix_ns    INTEGER,
  -- run: the runner ran it; adopted: taken over from an interrupted runner (detail_json
  --   runner_interrupted, takeovers [{took_over_unix_ns, interrupted_runner_pid, ...}]);
  -- interrupted: the runner died before the case reached the agent (not a spent retry);
  -- mark-infra: an operator reclassified the case as infra_failed (`harness mark-infra`);
  -- reset-infra: an operator restarted the retry budget (`harness reset-infra`)
  kind             TEXT NOT NULL DEFAULT 'run',
  detail_json      TEXT,            -- mark-infra: {reason, previous_status, operator}; reset-infra: {reason, operator,
                                    -- previous_runs}; run/adopted: {agent_case_id, runner_pid, submitted, phase, last_seen_unix_ns}
  PRIMARY KEY (case_id, attempt)
);
