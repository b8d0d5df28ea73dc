# Sourced by the benches of this folder (sh): the one static-zram case they run in a guest, as
# a case spec. The calibrated episode: 320 MiB at 16 MiB/s, a 64 MiB active window sliding at
# the spec default, bg memory.max 300 MiB; static-zram, so the controller never acts.
# bench_spec_json CASE_ID WARMUP_S PRESSURE_S RECOVERY_S TELEMETRY_PERIOD_MS
# (trigger.window_ms is set to the period: the spec requires them equal).
bench_spec_json() {
  cat <<JSON
{"case_id": "$1", "campaign": "bench", "vm": "vm0", "regime": "slow-structured",
 "repeat": 1, "configuration": "static-zram", "pinned_commit": "any",
 "vm_shape": {"vcpus": 1, "memory_mib": 1024},
 "phases_s": {"warmup": $2, "pressure": $3, "recovery": $4},
 "cgroups": {"parent": "harness", "bg_memory_max_bytes": 314572800},
 "backend": {"zram_disksize_bytes": 536870912, "zram_algorithm": "lzo-rle", "zram_priority": 100,
             "swapfile_path": "/var/lib/harness/swapfile", "swapfile_priority": 10},
 "pressure": {"allocation_bytes": 335544320, "rate_mib_s": 16, "active_set_bytes": 67108864,
              "contents": "structured", "seed": 1},
 "canaries": {"period_ms": 100, "compute_hot_bytes": 16777216, "sqlite_db_path": "/var/lib/harness/canary.db",
              "sqlite_queries_per_request": 8, "seed": 1},
 "trigger": {"window_ms": $5, "min_increase_us": 1000, "consecutive_windows": 3},
 "telemetry_period_ms": $5}
JSON
}
