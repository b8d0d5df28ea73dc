#pragma once
// A YAML value (already through the strict reader, strict_yaml.hpp) as JSON: how a campaign's
// free-form blocks (an arm's `params`) reach the JSON of a plan and a case spec.
#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>

#include <string>

namespace harness::yaml {

/// Mappings become objects, sequences arrays. A plain scalar becomes an integer when it reads
/// as one (int64), else a number (finite double), else true/false for `true`/`false`, else
/// null for `~`/`null`, else a string; a quoted scalar is always a string. Aliases are
/// followed. Throws InputError "FILE:LINE:COL: field FIELD[...]: ..." for a mapping key that
/// is not a plain scalar.
nlohmann::json to_json(const YAML::Node& n, const std::string& file, const std::string& field);

}  // namespace harness::yaml
