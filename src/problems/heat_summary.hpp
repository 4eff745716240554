// The heat problem's lines of the run summary, from the report (the implicit step's CG, its
// preconditioner, and the error against the exact solution).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace gridsim {

std::string heat_summary(const nlohmann::json& report);

}  // namespace gridsim
