#include "core/cuda/buffer.hpp"

namespace gpufact {

std::size_t device_free_bytes() {
  std::size_t free_bytes = 0, total_bytes = 0;
  GPUFACT_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return free_bytes;
}

}  // namespace gpufact
