// Rotating input sets (DESIGN.md "Measurement"): when one input fits in the L2, repeated samples
// over the same buffer measure the cache. Cycling through enough copies that more than twice
// the L2 is touched between two uses of one copy makes every sample read from DRAM, without
// the cost of a flush.
#pragma once

#include "core/cuda/buffer.hpp"

#include <cstddef>
#include <stdexcept>
#include <vector>

namespace gpufact {

// Copies needed so that cycling through them touches more than 2 × l2_bytes before a copy is
// reused: 1 when one set is already that large, at most max_sets.
std::size_t rotation_count(std::size_t bytes_per_set, std::size_t l2_bytes, std::size_t max_sets = 256);

// `sets` device buffers of `count` elements each; at(i) is the buffer for sample i.
template <class T>
class RotatingBuffers {
 public:
  RotatingBuffers(std::size_t count, std::size_t sets) {
    if (sets == 0) throw std::invalid_argument("RotatingBuffers needs at least one set");
    buffers_.reserve(sets);
    for (std::size_t i = 0; i < sets; ++i) buffers_.emplace_back(count);
  }
  T* at(std::size_t sample) { return buffers_[sample % buffers_.size()].data(); }
  DeviceBuffer<T>& set(std::size_t i) { return buffers_[i]; }
  std::size_t sets() const { return buffers_.size(); }

 private:
  std::vector<DeviceBuffer<T>> buffers_;
};

}  // namespace gpufact
