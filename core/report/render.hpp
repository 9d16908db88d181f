// `gpufact report`: the papers' tables from a report, one table per artifact, derived only from
// the report's results (STYLE.md 7).
#pragma once

#include "core/report/report_file.hpp"

#include <ostream>

namespace gpufact {

void render_markdown(const Report& report, std::ostream& out);
// Long format: one row per (result, metric).
void render_csv(const Report& report, std::ostream& out);

}  // namespace gpufact
