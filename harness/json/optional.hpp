#pragma once
// An optional value written as JSON: the value, or null when it is absent (an absent
// measurement or setting is null in every document the harness writes, never zero or "").
#include <nlohmann/json.hpp>

#include <optional>

namespace harness::json {

/// `v`'s value as JSON, or null when `v` is empty.
template <class T>
nlohmann::json or_null(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

}  // namespace harness::json
