#include "apps/gpufact/catalog.hpp"

#include "factorizations/host_blas/host_blas.hpp"
#include "microbench/bandwidth/bandwidth.hpp"
#include "microbench/memory/memory.hpp"

namespace gpufact {

const Registry& experiment_catalog() {
  static const Registry registry = [] {
    Registry r;
    factorizations::register_host_blas(r);
    microbench::register_bandwidth(r);
    microbench::register_fig1(r);
    microbench::register_fig2(r);
    return r;
  }();
  return registry;
}

}  // namespace gpufact
