#pragma once
// Table 2 of the report: the pressure regimes (study), with what the load achieved.
#include "analysis/data/triplets.hpp"
#include "analysis/tables/table.hpp"

namespace analysis {

/// Table 2 (`table2_regimes`): per regime of ts's blocks, the nominal allocation rate (MiB/s, the
/// spec's), the achieved rate's median (MiB/s) and the pressure-episode fraction's median over its
/// cases ("not measured" when none recorded it), contents, VMs, blocks and cases.
Table table2(const TripletSet& ts);

}  // namespace analysis
