#include "apps/gpufact/catalog.hpp"

#include "factorizations/host_blas/host_blas.hpp"
#include "microbench/bandwidth/bandwidth.hpp"
#include "microbench/barrier/barrier.hpp"
#include "microbench/launch/launch.hpp"

namespace gpufact {

const Registry& experiment_catalog() {
  static const Registry registry = [] {
    Registry r;
    factorizations::register_host_blas(r);
    microbench::register_bandwidth(r);
    microbench::register_launch(r);
    microbench::register_barrier(r);
    return r;
  }();
  return registry;
}

}  // namespace gpufact
