#include "apps/gpufact/catalog.hpp"

#include "factorizations/host_blas/host_blas.hpp"
#include "microbench/bandwidth/bandwidth.hpp"
#include "microbench/peak/peak.hpp"
#include "microbench/pipeline/pipeline.hpp"
#include "microbench/smem/smem.hpp"
#include "microbench/transfer/transfer.hpp"

namespace gpufact {

const Registry& experiment_catalog() {
  static const Registry registry = [] {
    Registry r;
    factorizations::register_host_blas(r);
    microbench::register_bandwidth(r);
    microbench::register_transfer(r);
    microbench::register_pipeline(r);
    microbench::register_peak(r);
    microbench::register_smem(r);
    return r;
  }();
  return registry;
}

}  // namespace gpufact
