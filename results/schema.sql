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
-- columns of telemetry and reclaim_actions.write_cpu_us; version 5 keyed the three large
-- per-case tables by cases.case_key (below); version 6 added the table arms and checks
-- cases.configuration and schedule.configuration against it instead of a fixed list of names;
-- version 7 added cases.engine_kind; version 8 added the reclaim CPU columns of telemetry (kswapd_cpu_us,
-- bg/fg_cpu_usage_us, bg/fg_cpu_system_us).
-- An older database is brought to this version when it is opened for writing (results/db.cpp:
-- columns added NULL for its earlier cases; the rows of a version-4 layout copied under case
-- keys; cases rebuilt without the list and arms filled from the configurations it holds), in
-- one transaction; opened read-only it is read as it is. A file of version 5 to 7 gains version 8's
-- telemetry columns by ALTER TABLE (NULL for its earlier samples), and its telemetry view and the
-- view's triggers are made again below with them.
INSERT OR IGNORE INTO schema_info(key, value) VALUES ('schema_version', '8');

-- Version 6: the campaign's arms (harness/case/control/arm.hpp). An arm is a name (what
-- cases.configuration and schedule.configuration hold), the registered policy it runs
-- (harness/case/control/policy.hpp) and that policy's parameters. Written when a plan is stored
-- (`harness plan --db`, harness/campaign/store/plan_store.cpp), one row per arm of the plan's cases;
-- a case bundle's is empty (its spec names its arm). A file converted from version 5 has one row
-- per configuration it held, with the study's parameters.
CREATE TABLE IF NOT EXISTS arms (
  name        TEXT PRIMARY KEY,   -- the arm's name: [a-z][a-z0-9-]{0,39}
  policy      TEXT NOT NULL,      -- the registered policy's name
  -- The policy's parameters, defaults filled, as canonical JSON (keys sorted, no whitespace).
  -- {} when the arm's cases disagree (a pilot's bounded-reclaim: its dose is per case, in
  -- cases.dose_bytes).
  params_json TEXT NOT NULL,
  sha256      TEXT NOT NULL,      -- SHA-256 (hex) of {"name","params","policy"} as canonical JSON
  position    INTEGER NOT NULL    -- report order, 0-based
);

-- One row per case attempt that produced a bundle. In the campaign DB the
-- latest attempt of a case is the one analysed (see attempts for all).
CREATE TABLE IF NOT EXISTS cases (
  case_id            TEXT NOT NULL UNIQUE,  -- [A-Za-z0-9._-]{1,128}
  campaign           TEXT NOT NULL,
  vm                 TEXT NOT NULL,      -- stratum part 1 (e.g. vm0)
  regime             TEXT NOT NULL,      -- stratum part 2 (e.g. fast-structured)
  repeat             INTEGER NOT NULL,   -- repeat identifier within (vm, regime)
  triplet_id         TEXT,               -- matched triplet: same vm, regime, repeat
  configuration      TEXT NOT NULL,      -- the arm's name: a row of arms (checked below, version 6)
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
  -- Where the case ran, written by the runner (harness/campaign/store/import.hpp RanOn):
  host_uri           TEXT,               -- hypervisor host of its guest: "local:HOSTNAME" (local-qemu),
                                         -- a libvirt URI, a hosts file's hypervisor:; NULL = not known
  overcommitted      INTEGER,            -- 1: that host had more guest vCPUs than cores - 1 or more guest
                                         -- memory than available (provider.overcommit: true); 0: within;
                                         -- NULL: not judged (hosts engine, older databases)
  -- Version 5: the case's key in this file, stored in each row of canary_requests_rows,
  -- telemetry_rows and controller_events_rows instead of the case id. Assigned on insert (an
  -- INTEGER PRIMARY KEY: VACUUM keeps it); the same case has different keys in its bundle and in
  -- the campaign DB, and a reimported case gets a new one. Join on it; never store it elsewhere.
  case_key           INTEGER PRIMARY KEY,
  engine_kind        TEXT                -- version 7: the engine that gave the case's guest (local-qemu,
                                         -- libvirt, hosts, ...: harness/pool/README.md), written by the
                                         -- runner with host_uri; NULL = not recorded (an older case).
                                         -- Last: a migrated file gains it by ALTER TABLE, which appends
);

-- Phase boundaries: warmup, pressure, recovery, restoration.
CREATE TABLE IF NOT EXISTS phases (
  case_id   TEXT NOT NULL REFERENCES cases(case_id) ON DELETE CASCADE,
  phase     TEXT NOT NULL CHECK (phase IN ('warmup','pressure','recovery','restoration')),
  start_ns  INTEGER NOT NULL,
  end_ns    INTEGER,
  PRIMARY KEY (case_id, phase)
);

-- ---- the three large per-case tables (schema version 5) -------------------------
-- canary_requests, telemetry and controller_events hold nearly every row of a campaign. Each is
-- stored in <name>_rows, keyed by cases.case_key (an integer) instead of the case id, and read
-- through the view <name>, which adds case_id and has the columns, in the order, the table of
-- that name had in version 4: `SELECT ... FROM canary_requests WHERE case_id = ?` reads as
-- before. A case's rows then sit together at the end of each b-tree, where an import appends
-- them, and no row repeats the (up to 128-character) case id: the import of a 9-minute case
-- and the file shrink (docs/DESIGN.md "Runner at fleet scale", 2026-12-04). INSERT, UPDATE and
-- DELETE on a view go to its rows through the triggers below (a case id that names no case
-- is refused, as the foreign key did); the harness's own writers of large cases
-- (harness/case/run/bundle.cpp, results/import.cpp) write <name>_rows directly.

-- Every scheduled canary request (none skipped: no coordinated omission).
-- wake delay = wake_ns - scheduled_ns; service = completion_ns - wake_ns;
-- response = completion_ns - scheduled_ns; deadline miss = completion_ns > next scheduled start.
-- A request that never completed (canary killed mid-request) has completion_ns NULL.
-- WITHOUT ROWID: one b-tree in key order (case, canary, seq), so a row is written once.
CREATE TABLE IF NOT EXISTS canary_requests_rows (
  case_key      INTEGER NOT NULL REFERENCES cases(case_key) ON DELETE CASCADE,
  canary        TEXT NOT NULL CHECK (canary IN ('compute','sqlite')),
  seq           INTEGER NOT NULL,        -- 0-based request index
  scheduled_ns  INTEGER NOT NULL,
  wake_ns       INTEGER,
  completion_ns INTEGER,
  minflt        INTEGER,                 -- getrusage(RUSAGE_THREAD) deltas over the request
  majflt        INTEGER,
  nvcsw         INTEGER,
  nivcsw        INTEGER,
  PRIMARY KEY (case_key, canary, seq)
) WITHOUT ROWID;
CREATE VIEW IF NOT EXISTS canary_requests AS SELECT c.case_id AS case_id,
  r.canary AS canary, r.seq AS seq, r.scheduled_ns AS scheduled_ns, r.wake_ns AS wake_ns,
  r.completion_ns AS completion_ns, r.minflt AS minflt, r.majflt AS majflt, r.nvcsw AS nvcsw,
  r.nivcsw AS nivcsw
FROM canary_requests_rows r JOIN cases c ON c.case_key = r.case_key;
CREATE TRIGGER IF NOT EXISTS canary_requests_insert INSTEAD OF INSERT ON canary_requests BEGIN
  SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: canary_requests.case_id names no case')
    WHERE NOT EXISTS (SELECT 1 FROM cases WHERE case_id = NEW.case_id);
  INSERT INTO canary_requests_rows(case_key,
    canary, seq, scheduled_ns, wake_ns, completion_ns, minflt, majflt, nvcsw, nivcsw)
  VALUES ((SELECT case_key FROM cases WHERE case_id = NEW.case_id),
    NEW.canary, NEW.seq, NEW.scheduled_ns, NEW.wake_ns, NEW.completion_ns, NEW.minflt, NEW.majflt,
    NEW.nvcsw, NEW.nivcsw);
END;
CREATE TRIGGER IF NOT EXISTS canary_requests_update INSTEAD OF UPDATE ON canary_requests BEGIN
  SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: canary_requests.case_id names no case')
    WHERE NOT EXISTS (SELECT 1 FROM cases WHERE case_id = NEW.case_id);
  UPDATE canary_requests_rows SET case_key = (SELECT case_key FROM cases WHERE case_id = NEW.case_id),
    canary = NEW.canary, seq = NEW.seq, scheduled_ns = NEW.scheduled_ns, wake_ns = NEW.wake_ns,
    completion_ns = NEW.completion_ns, minflt = NEW.minflt, majflt = NEW.majflt, nvcsw = NEW.nvcsw,
    nivcsw = NEW.nivcsw
  WHERE case_key = (SELECT case_key FROM cases WHERE case_id = OLD.case_id) AND
    canary IS OLD.canary AND seq IS OLD.seq;
END;
CREATE TRIGGER IF NOT EXISTS canary_requests_delete INSTEAD OF DELETE ON canary_requests BEGIN
  DELETE FROM canary_requests_rows
  WHERE case_key = (SELECT case_key FROM cases WHERE case_id = OLD.case_id) AND
    canary IS OLD.canary AND seq IS OLD.seq;
END;

-- 1 Hz telemetry, one row per sample (the controller reads the same samples).
-- WITHOUT ROWID, as canary_requests_rows and for the same reason.
CREATE TABLE IF NOT EXISTS telemetry_rows (
  case_key                INTEGER NOT NULL REFERENCES cases(case_key) ON DELETE CASCADE,
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
  -- Version 8: the CPU time reclaim takes, where the kernel accounts it (harness/case/run/telemetry_cpu.hpp),
  -- cumulative, us. Last of the columns: a migrated file gains them by ALTER TABLE, which appends.
  kswapd_cpu_us INTEGER,                            -- utime + stime of the kswapd threads (/proc/<pid>/stat)
  bg_cpu_usage_us INTEGER, bg_cpu_system_us INTEGER,  -- bg cpu.stat usage_usec, system_usec
  fg_cpu_usage_us INTEGER, fg_cpu_system_us INTEGER,  -- fg cpu.stat usage_usec, system_usec
  PRIMARY KEY (case_key, t_ns)
) WITHOUT ROWID;
CREATE VIEW IF NOT EXISTS telemetry AS SELECT c.case_id AS case_id,
  r.t_ns AS t_ns, r.phase AS phase, r.bg_some_us AS bg_some_us, r.bg_full_us AS bg_full_us,
  r.fg_some_us AS fg_some_us, r.fg_full_us AS fg_full_us, r.sys_some_us AS sys_some_us,
  r.sys_full_us AS sys_full_us, r.bg_current_bytes AS bg_current_bytes,
  r.fg_current_bytes AS fg_current_bytes, r.bg_swap_current_bytes AS bg_swap_current_bytes,
  r.fg_swap_current_bytes AS fg_swap_current_bytes, r.bg_pgsteal AS bg_pgsteal,
  r.bg_pgscan AS bg_pgscan, r.bg_workingset_refault_anon AS bg_workingset_refault_anon,
  r.bg_workingset_refault_file AS bg_workingset_refault_file, r.bg_pgmajfault AS bg_pgmajfault,
  r.fg_pgsteal AS fg_pgsteal, r.fg_pgscan AS fg_pgscan,
  r.fg_workingset_refault_anon AS fg_workingset_refault_anon,
  r.fg_workingset_refault_file AS fg_workingset_refault_file, r.fg_pgmajfault AS fg_pgmajfault,
  r.bg_oom AS bg_oom, r.bg_oom_kill AS bg_oom_kill, r.fg_oom AS fg_oom,
  r.fg_oom_kill AS fg_oom_kill, r.pswpin AS pswpin, r.pswpout AS pswpout,
  r.zram_orig_data_bytes AS zram_orig_data_bytes, r.zram_compr_data_bytes AS zram_compr_data_bytes,
  r.zram_mem_used_bytes AS zram_mem_used_bytes, r.zram_swap_used_kib AS zram_swap_used_kib,
  r.swapfile_used_kib AS swapfile_used_kib, r.extra_json AS extra_json, r.read_ns AS read_ns,
  r.steal_us AS steal_us, r.bg_cpu_some_us AS bg_cpu_some_us, r.bg_cpu_full_us AS bg_cpu_full_us,
  r.bg_io_some_us AS bg_io_some_us, r.bg_io_full_us AS bg_io_full_us,
  r.fg_cpu_some_us AS fg_cpu_some_us, r.fg_cpu_full_us AS fg_cpu_full_us,
  r.fg_io_some_us AS fg_io_some_us, r.fg_io_full_us AS fg_io_full_us,
  r.sys_cpu_some_us AS sys_cpu_some_us, r.sys_cpu_full_us AS sys_cpu_full_us,
  r.sys_io_some_us AS sys_io_some_us, r.sys_io_full_us AS sys_io_full_us,
  r.kswapd_cpu_us AS kswapd_cpu_us, r.bg_cpu_usage_us AS bg_cpu_usage_us,
  r.bg_cpu_system_us AS bg_cpu_system_us, r.fg_cpu_usage_us AS fg_cpu_usage_us,
  r.fg_cpu_system_us AS fg_cpu_system_us
FROM telemetry_rows r JOIN cases c ON c.case_key = r.case_key;
CREATE TRIGGER IF NOT EXISTS telemetry_insert INSTEAD OF INSERT ON telemetry BEGIN
  SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: telemetry.case_id names no case')
    WHERE NOT EXISTS (SELECT 1 FROM cases WHERE case_id = NEW.case_id);
  INSERT INTO telemetry_rows(case_key,
    t_ns, phase, bg_some_us, bg_full_us, fg_some_us, fg_full_us, sys_some_us, sys_full_us,
    bg_current_bytes, fg_current_bytes, bg_swap_current_bytes, fg_swap_current_bytes, bg_pgsteal,
    bg_pgscan, bg_workingset_refault_anon, bg_workingset_refault_file, bg_pgmajfault, fg_pgsteal,
    fg_pgscan, fg_workingset_refault_anon, fg_workingset_refault_file, fg_pgmajfault, bg_oom,
    bg_oom_kill, fg_oom, fg_oom_kill, pswpin, pswpout, zram_orig_data_bytes, zram_compr_data_bytes,
    zram_mem_used_bytes, zram_swap_used_kib, swapfile_used_kib, extra_json, read_ns, steal_us,
    bg_cpu_some_us, bg_cpu_full_us, bg_io_some_us, bg_io_full_us, fg_cpu_some_us, fg_cpu_full_us,
    fg_io_some_us, fg_io_full_us, sys_cpu_some_us, sys_cpu_full_us, sys_io_some_us, sys_io_full_us,
    kswapd_cpu_us, bg_cpu_usage_us, bg_cpu_system_us, fg_cpu_usage_us, fg_cpu_system_us)
  VALUES ((SELECT case_key FROM cases WHERE case_id = NEW.case_id),
    NEW.t_ns, NEW.phase, NEW.bg_some_us, NEW.bg_full_us, NEW.fg_some_us, NEW.fg_full_us,
    NEW.sys_some_us, NEW.sys_full_us, NEW.bg_current_bytes, NEW.fg_current_bytes,
    NEW.bg_swap_current_bytes, NEW.fg_swap_current_bytes, NEW.bg_pgsteal, NEW.bg_pgscan,
    NEW.bg_workingset_refault_anon, NEW.bg_workingset_refault_file, NEW.bg_pgmajfault,
    NEW.fg_pgsteal, NEW.fg_pgscan, NEW.fg_workingset_refault_anon, NEW.fg_workingset_refault_file,
    NEW.fg_pgmajfault, NEW.bg_oom, NEW.bg_oom_kill, NEW.fg_oom, NEW.fg_oom_kill, NEW.pswpin,
    NEW.pswpout, NEW.zram_orig_data_bytes, NEW.zram_compr_data_bytes, NEW.zram_mem_used_bytes,
    NEW.zram_swap_used_kib, NEW.swapfile_used_kib, NEW.extra_json, NEW.read_ns, NEW.steal_us,
    NEW.bg_cpu_some_us, NEW.bg_cpu_full_us, NEW.bg_io_some_us, NEW.bg_io_full_us,
    NEW.fg_cpu_some_us, NEW.fg_cpu_full_us, NEW.fg_io_some_us, NEW.fg_io_full_us,
    NEW.sys_cpu_some_us, NEW.sys_cpu_full_us, NEW.sys_io_some_us, NEW.sys_io_full_us,
    NEW.kswapd_cpu_us, NEW.bg_cpu_usage_us, NEW.bg_cpu_system_us, NEW.fg_cpu_usage_us,
    NEW.fg_cpu_system_us);
END;
CREATE TRIGGER IF NOT EXISTS telemetry_update INSTEAD OF UPDATE ON telemetry BEGIN
  SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: telemetry.case_id names no case')
    WHERE NOT EXISTS (SELECT 1 FROM cases WHERE case_id = NEW.case_id);
  UPDATE telemetry_rows SET case_key = (SELECT case_key FROM cases WHERE case_id = NEW.case_id),
    t_ns = NEW.t_ns, phase = NEW.phase, bg_some_us = NEW.bg_some_us, bg_full_us = NEW.bg_full_us,
    fg_some_us = NEW.fg_some_us, fg_full_us = NEW.fg_full_us, sys_some_us = NEW.sys_some_us,
    sys_full_us = NEW.sys_full_us, bg_current_bytes = NEW.bg_current_bytes,
    fg_current_bytes = NEW.fg_current_bytes, bg_swap_current_bytes = NEW.bg_swap_current_bytes,
    fg_swap_current_bytes = NEW.fg_swap_current_bytes, bg_pgsteal = NEW.bg_pgsteal,
    bg_pgscan = NEW.bg_pgscan, bg_workingset_refault_anon = NEW.bg_workingset_refault_anon,
    bg_workingset_refault_file = NEW.bg_workingset_refault_file, bg_pgmajfault = NEW.bg_pgmajfault,
    fg_pgsteal = NEW.fg_pgsteal, fg_pgscan = NEW.fg_pgscan,
    fg_workingset_refault_anon = NEW.fg_workingset_refault_anon,
    fg_workingset_refault_file = NEW.fg_workingset_refault_file, fg_pgmajfault = NEW.fg_pgmajfault,
    bg_oom = NEW.bg_oom, bg_oom_kill = NEW.bg_oom_kill, fg_oom = NEW.fg_oom,
    fg_oom_kill = NEW.fg_oom_kill, pswpin = NEW.pswpin, pswpout = NEW.pswpout,
    zram_orig_data_bytes = NEW.zram_orig_data_bytes,
    zram_compr_data_bytes = NEW.zram_compr_data_bytes,
    zram_mem_used_bytes = NEW.zram_mem_used_bytes, zram_swap_used_kib = NEW.zram_swap_used_kib,
    swapfile_used_kib = NEW.swapfile_used_kib, extra_json = NEW.extra_json, read_ns = NEW.read_ns,
    steal_us = NEW.steal_us, bg_cpu_some_us = NEW.bg_cpu_some_us,
    bg_cpu_full_us = NEW.bg_cpu_full_us, bg_io_some_us = NEW.bg_io_some_us,
    bg_io_full_us = NEW.bg_io_full_us, fg_cpu_some_us = NEW.fg_cpu_some_us,
    fg_cpu_full_us = NEW.fg_cpu_full_us, fg_io_some_us = NEW.fg_io_some_us,
    fg_io_full_us = NEW.fg_io_full_us, sys_cpu_some_us = NEW.sys_cpu_some_us,
    sys_cpu_full_us = NEW.sys_cpu_full_us, sys_io_some_us = NEW.sys_io_some_us,
    sys_io_full_us = NEW.sys_io_full_us, kswapd_cpu_us = NEW.kswapd_cpu_us,
    bg_cpu_usage_us = NEW.bg_cpu_usage_us, bg_cpu_system_us = NEW.bg_cpu_system_us,
    fg_cpu_usage_us = NEW.fg_cpu_usage_us, fg_cpu_system_us = NEW.fg_cpu_system_us
  WHERE case_key = (SELECT case_key FROM cases WHERE case_id = OLD.case_id) AND t_ns IS OLD.t_ns;
END;
CREATE TRIGGER IF NOT EXISTS telemetry_delete INSTEAD OF DELETE ON telemetry BEGIN
  DELETE FROM telemetry_rows
  WHERE case_key = (SELECT case_key FROM cases WHERE case_id = OLD.case_id) AND t_ns IS OLD.t_ns;
END;

-- Controller: one row per 1 s window and one per trigger / action / backend event. No key of
-- its own (two events may share t_ns and kind): a rowid table, with an index by case.
CREATE TABLE IF NOT EXISTS controller_events_rows (
  case_key     INTEGER NOT NULL REFERENCES cases(case_key) ON DELETE CASCADE,
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
CREATE INDEX IF NOT EXISTS controller_events_rows_by_case ON controller_events_rows(case_key, t_ns);
CREATE VIEW IF NOT EXISTS controller_events AS SELECT c.case_id AS case_id,
  r.t_ns AS t_ns, r.kind AS kind, r.some_total_us AS some_total_us, r.delta_us AS delta_us,
  r.counting AS counting, r.consecutive AS consecutive, r.detail_json AS detail_json,
  r.window_ns AS window_ns, r.irregular AS irregular
FROM controller_events_rows r JOIN cases c ON c.case_key = r.case_key;
CREATE TRIGGER IF NOT EXISTS controller_events_insert INSTEAD OF INSERT ON controller_events BEGIN
  SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: controller_events.case_id names no case')
    WHERE NOT EXISTS (SELECT 1 FROM cases WHERE case_id = NEW.case_id);
  INSERT INTO controller_events_rows(case_key,
    t_ns, kind, some_total_us, delta_us, counting, consecutive, detail_json, window_ns, irregular)
  VALUES ((SELECT case_key FROM cases WHERE case_id = NEW.case_id),
    NEW.t_ns, NEW.kind, NEW.some_total_us, NEW.delta_us, NEW.counting, NEW.consecutive,
    NEW.detail_json, NEW.window_ns, NEW.irregular);
END;
CREATE TRIGGER IF NOT EXISTS controller_events_update INSTEAD OF UPDATE ON controller_events BEGIN
  SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: controller_events.case_id names no case')
    WHERE NOT EXISTS (SELECT 1 FROM cases WHERE case_id = NEW.case_id);
  UPDATE controller_events_rows SET case_key = (SELECT case_key FROM cases WHERE case_id = NEW.case_id),
    t_ns = NEW.t_ns, kind = NEW.kind, some_total_us = NEW.some_total_us, delta_us = NEW.delta_us,
    counting = NEW.counting, consecutive = NEW.consecutive, detail_json = NEW.detail_json,
    window_ns = NEW.window_ns, irregular = NEW.irregular
  WHERE case_key = (SELECT case_key FROM cases WHERE case_id = OLD.case_id) AND t_ns IS OLD.t_ns AND
    kind IS OLD.kind AND some_total_us IS OLD.some_total_us AND delta_us IS OLD.delta_us AND
    counting IS OLD.counting AND consecutive IS OLD.consecutive AND
    detail_json IS OLD.detail_json AND window_ns IS OLD.window_ns AND
    irregular IS OLD.irregular;
END;
CREATE TRIGGER IF NOT EXISTS controller_events_delete INSTEAD OF DELETE ON controller_events BEGIN
  DELETE FROM controller_events_rows
  WHERE case_key = (SELECT case_key FROM cases WHERE case_id = OLD.case_id) AND t_ns IS OLD.t_ns AND
    kind IS OLD.kind AND some_total_us IS OLD.some_total_us AND delta_us IS OLD.delta_us AND
    counting IS OLD.counting AND consecutive IS OLD.consecutive AND
    detail_json IS OLD.detail_json AND window_ns IS OLD.window_ns AND
    irregular IS OLD.irregular;
END;

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
  configuration TEXT NOT NULL,       -- the arm's name: a row of arms (checked below, version 6)
  dose_bytes    INTEGER,
  state         TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending','completed','infra_failed','lost'))
);

-- Version 6: cases.configuration and schedule.configuration name a row of arms. Checked while
-- arms has rows (a campaign DB with its plan stored); a case bundle's arms is empty and its
-- rows are not checked here (the executor's spec parser checked the name). SQLite's RAISE takes
-- a fixed message; the harness's own writers name the configuration before they write
-- (results/import.cpp). Version 5 checked a fixed list of three names instead.
CREATE TRIGGER IF NOT EXISTS cases_configuration_insert BEFORE INSERT ON cases
  WHEN EXISTS (SELECT 1 FROM arms) AND NOT EXISTS (SELECT 1 FROM arms WHERE name = NEW.configuration)
BEGIN
  SELECT RAISE(ABORT, 'cases.configuration names no arm of this campaign (no row of arms has that name)');
END;
CREATE TRIGGER IF NOT EXISTS cases_configuration_update BEFORE UPDATE OF configuration ON cases
  WHEN EXISTS (SELECT 1 FROM arms) AND NOT EXISTS (SELECT 1 FROM arms WHERE name = NEW.configuration)
BEGIN
  SELECT RAISE(ABORT, 'cases.configuration names no arm of this campaign (no row of arms has that name)');
END;
CREATE TRIGGER IF NOT EXISTS schedule_configuration_insert BEFORE INSERT ON schedule
  WHEN EXISTS (SELECT 1 FROM arms) AND NOT EXISTS (SELECT 1 FROM arms WHERE name = NEW.configuration)
BEGIN
  SELECT RAISE(ABORT, 'schedule.configuration names no arm of this campaign (no row of arms has that name)');
END;
CREATE TRIGGER IF NOT EXISTS schedule_configuration_update BEFORE UPDATE OF configuration ON schedule
  WHEN EXISTS (SELECT 1 FROM arms) AND NOT EXISTS (SELECT 1 FROM arms WHERE name = NEW.configuration)
BEGIN
  SELECT RAISE(ABORT, 'schedule.configuration names no arm of this campaign (no row of arms has that name)');
END;

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
