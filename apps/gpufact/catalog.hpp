#pragma once

#include "core/bench/registry.hpp"

namespace gpufact {
// The registry holding every experiment gpufact ships (DESIGN.md's catalog, as implemented).
const Registry& experiment_catalog();
}  // namespace gpufact
