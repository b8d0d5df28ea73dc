#!/usr/bin/python3
"""check_layers.py finds each kind of violation (a)-(f) and accepts the includes the rules allow."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import check_layers  # noqa: E402


def one(includes, expected):
    found = check_layers.violations(includes)
    assert found == expected, found


# (a) below harness/cli including it; harness/cli including itself is its own business.
one({"harness/campaign/commands/run_command.cpp": {"harness/cli/exit_codes.hpp"}},
    ["harness/campaign/commands/run_command.cpp: includes harness/cli/exit_codes.hpp: nothing below harness/cli "
     "includes it (a)"])
one({"harness/cli/cmd_campaign.cpp": {"harness/cli/exit_codes.hpp", "harness/campaign/commands/run_command.hpp"}}, [])
# (b) analysis including the campaign; the campaign including analysis is the allowed direction.
one({"analysis/compare/regression.hpp": {"harness/campaign/model/campaign.hpp"}},
    ["analysis/compare/regression.hpp: includes harness/campaign/model/campaign.hpp: analysis never includes "
     "harness/campaign (b)"])
one({"harness/campaign/plan/pilot_match.cpp": {"analysis/tables/pilot.hpp"}}, [])
# (c) two units including each other, whichever of their files does it, once per pair; a unit's
# own header is no cycle.
one({"harness/case/spec/spec.cpp": {"harness/case/spec/spec.hpp", "harness/case/control/arm.hpp"},
     "harness/case/control/arm.hpp": {"harness/case/spec/spec.hpp"}},
    ["harness/case/control/arm <-> harness/case/spec/spec: the two units include each other (c)"])
one({"harness/case/spec/spec.cpp": {"harness/case/spec/spec.hpp", "harness/case/control/arm.hpp"},
     "harness/case/control/arm.cpp": {"harness/case/control/arm.hpp"}}, [])
# A class's private header (b_impl.hpp) is part of its unit; another header including it back is a cycle.
one({"harness/pool/libvirt/libvirt_pool.cpp": {"harness/pool/libvirt/libvirt_pool_impl.hpp"},
     "harness/pool/libvirt/libvirt_pool_impl.hpp": {"harness/pool/libvirt/libvirt_pool.hpp"}}, [])
one({"harness/pool/libvirt/tunnel.cpp": {"harness/pool/libvirt/libvirt_pool_impl.hpp"},
     "harness/pool/libvirt/libvirt_pool_impl.hpp": {"harness/pool/libvirt/tunnel.hpp"}},
    ["harness/pool/libvirt/libvirt_pool <-> harness/pool/libvirt/tunnel: the two units include each other (c)"])
# (d) a command reaching into another command; the shared base is allowed.
one({"harness/campaign/commands/check_command.cpp": {"harness/campaign/commands/run_command.hpp",
                                                     "harness/campaign/commands/command_campaign.hpp",
                                                     "harness/campaign/commands/command_env.hpp",
                                                     "harness/campaign/commands/check_command.hpp"}},
    ["harness/campaign/commands/check_command.cpp: includes harness/campaign/commands/run_command.hpp: a command "
     "includes no other command (d)"])
# (e) a room including a later room, in both ordered folders; earlier rooms and other folders are fine.
one({"harness/campaign/model/campaign_arms.cpp": {"harness/campaign/plan/schedule.hpp"}},
    ["harness/campaign/model/campaign_arms.cpp: includes harness/campaign/plan/schedule.hpp: room model is below "
     "room plan in harness/campaign (model < plan < store < check < runner < commands) (e)"])
one({"analysis/stats/sequential.hpp": {"analysis/compare/regression.hpp"}},
    ["analysis/stats/sequential.hpp: includes analysis/compare/regression.hpp: room stats is below room compare in "
     "analysis (stats < data < tables < compare < simulate < report) (e)"])
one({"harness/campaign/commands/plan_command.cpp": {"harness/campaign/plan/schedule.hpp",
                                                    "analysis/report/report_table.hpp"},
     "analysis/report/report_table.cpp": {"analysis/stats/quantile.hpp", "analysis/tables/table.hpp"},
     "harness/campaign/runner/runner.cpp": {"harness/campaign/runner/worker.hpp"}}, [])
# (f) an engine's folder included outside harness/pool and harness/cli; the pool's own
# interface (harness/pool/*.hpp) is for everyone.
one({"harness/campaign/runner/runner.cpp": {"harness/pool/hosts/hosts_file.hpp", "harness/pool/pool.hpp"}},
    ["harness/campaign/runner/runner.cpp: includes harness/pool/hosts/hosts_file.hpp: an engine is named only in "
     "harness/pool (f)"])
one({"harness/pool/registry.cpp": {"harness/pool/libvirt/libvirt_pool.hpp"},
     "harness/cli/cmd_vm.cpp": {"harness/pool/local_guest/slots.hpp"},
     "harness/campaign/plan/pilot_match.cpp": {"harness/pool/engine.hpp"}}, [])
print("check_layers finds each kind of violation (a)-(f) and accepts the allowed includes")
