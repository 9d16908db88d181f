#include "apps/gpufact/catalog.hpp"

#include "factorizations/dense/dense_experiments.hpp"
#include "factorizations/caqr/caqr_experiments.hpp"
#include "factorizations/gemm/gemm_experiments.hpp"
#include "factorizations/host_blas/host_blas.hpp"
#include "factorizations/tsqr_baselines/qr_baselines.hpp"
#include "microbench/bandwidth/bandwidth.hpp"
#include "microbench/barrier/barrier.hpp"
#include "microbench/gemm/sgemm_simt_bench.hpp"
#include "microbench/launch/launch.hpp"
#include "microbench/memory/memory.hpp"
#include "microbench/panel/fig3.hpp"
#include "microbench/panel/qr_panel.hpp"
#include "microbench/peak/peak.hpp"
#include "microbench/pipeline/pipeline.hpp"
#include "microbench/smem/smem.hpp"
#include "microbench/transfer/transfer.hpp"

namespace gpufact {

const Registry& experiment_catalog() {
  static const Registry registry = [] {
    Registry r;
    factorizations::register_host_blas(r);
    // volkov08 §3 in the paper's order.
    microbench::register_launch(r);     // §3.1
    microbench::register_transfer(r);   // §3.2
    microbench::register_fig1(r);       // §3.3 Fig. 1
    microbench::register_fig2(r);       // §3.3 Fig. 2
    microbench::register_pipeline(r);   // §3.3
    microbench::register_peak(r);       // §3.4
    microbench::register_smem(r);       // §3.5
    microbench::register_barrier(r);    // §3.6
    microbench::register_bandwidth(r);  // §3.7
    microbench::register_fig3(r);       // §3.8
    microbench::register_qr_panel(r);   // §3.8 for the QR of §5
    factorizations::register_gemm(r);   // §4: Table 2, Figs. 5-6
    microbench::register_sgemm_tune(r);         // §4 (modern SIMT SGEMM)
    microbench::register_sgemm_triangular(r);   // §4.2
    dense::register_dense(r);           // §5–6: fig7 (+ table3), fig10, fig11
    factorizations::register_caqr(r);          // anderson10 §IV: kernels, fig7
    factorizations::register_qr_baselines(r);  // anderson10 §V: fig8, fig9, conditioning
    return r;
  }();
  return registry;
}

}  // namespace gpufact
