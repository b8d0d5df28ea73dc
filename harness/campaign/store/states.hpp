#pragma once
// The states of a planned case (schedule.state) and the statuses of its cases and attempts rows
// (results/schema.sql), as the campaign DB's rules name them (docs/PROTOCOL.md).
namespace harness::campaign {

/// cases/attempts status and schedule.state of a case that ran its schedule to the end
/// (the executor's "completed"; its outcomes, OOM kills included, are kept).
inline constexpr const char* kCompletedStatus = "completed";
/// Status of an attempts row while its attempt is in flight (written by begin_attempt).
inline constexpr const char* kInflightStatus = "running";
/// schedule.state of a planned case that has not run (store_plan).
inline constexpr const char* kPendingState = "pending";
/// schedule.state and cases/attempts status of a case to run again (docs/PROTOCOL.md).
inline constexpr const char* kInfraFailedStatus = "infra_failed";
/// attempts.status of the operator's `harness mark-infra` and `harness reset-infra` rows;
/// both leave schedule.state infra_failed.
inline constexpr const char* kMarkedInfraStatus = "marked_infra";
inline constexpr const char* kResetInfraStatus = "reset_infra";
/// cases/attempts status and schedule.state of a case lost after its pressure phase began.
inline constexpr const char* kLostStatus = "lost";

}  // namespace harness::campaign
