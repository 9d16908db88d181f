#include "factorizations/dense/cholesky_host.hpp"

#include "core/linalg/host_blas.hpp"
#include "factorizations/dense/lu_block_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gpufact::dense {

const char* cholesky_diagonal_name(CholeskyDiagonal d) {
  switch (d) {
    case CholeskyDiagonal::cusolver: return "cusolver";
    case CholeskyDiagonal::recursive: return "recursive";
    case CholeskyDiagonal::fused: return "fused";
    case CholeskyDiagonal::dataflow: return "dataflow";
  }
  return "?";
}

CholeskyDiagonal cholesky_diagonal_from(const std::string& name) {
  for (CholeskyDiagonal d : {CholeskyDiagonal::cusolver, CholeskyDiagonal::recursive, CholeskyDiagonal::fused,
                             CholeskyDiagonal::dataflow})
    if (name == cholesky_diagonal_name(d)) return d;
  throw std::invalid_argument("Cholesky diagonal method '" + name +
                              "' is not cusolver, recursive, fused or dataflow");
}

void validate(const CholeskyOptions& o) {
  if (o.nb < 1) throw std::invalid_argument("CholeskyOptions::nb = " + std::to_string(o.nb) + " must be >= 1");
  if (o.update_block < 0)
    throw std::invalid_argument("CholeskyOptions::update_block = " + std::to_string(o.update_block) +
                                " must be >= 0");
  if (o.panel_sms < 0)
    throw std::invalid_argument("CholeskyOptions::panel_sms = " + std::to_string(o.panel_sms) + " must be >= 0");
  if (o.dataflow_panel < 0 || o.dataflow_panel % 64 != 0)
    throw std::invalid_argument("CholeskyOptions::dataflow_panel = " + std::to_string(o.dataflow_panel) +
                                " must be 0 (by n) or a positive multiple of 64");
  (void)update_gemm_entry(o.gemm);
}

std::string describe(const CholeskyOptions& o) {
  std::string s = "nb=" + std::to_string(o.nb);
  if (o.lookahead) s += " lookahead";
  s += o.inverse_trsm ? " inverse" : " trsm";
  s += o.update_block > 0 ? " block=" + std::to_string(o.update_block) : std::string(" block=by_precision");
  s += std::string(" ") + update_gemm_entry(o.gemm).name;
  if (o.diagonal != CholeskyDiagonal::cusolver) s += std::string(" diagonal=") + cholesky_diagonal_name(o.diagonal);
  if (o.dataflow_panel > 0) s += " dataflow_panel=" + std::to_string(o.dataflow_panel);
  if (o.panel_sms > 0) s += " panel_sms=" + std::to_string(o.panel_sms);
  return s;
}

double cholesky_flops(std::int64_t n) {
  const double d = static_cast<double>(n);
  return d * d * d / 3.0;
}

std::vector<CholeskyStep> cholesky_schedule(std::int64_t n, std::int64_t nb) {
  if (n < 0 || nb < 1) throw std::invalid_argument("cholesky_schedule: n >= 0 and nb >= 1 required");
  std::vector<CholeskyStep> steps;
  for (std::int64_t j = 0; j < n; j += nb) steps.push_back({j, std::min(n, j + nb)});
  return steps;
}

std::vector<UpdateBlock> update_blocks(std::int64_t c0, std::int64_t c1, std::int64_t block) {
  std::vector<UpdateBlock> out;
  if (c1 <= c0) return out;
  if (block <= 0) return {{c0, c1}};
  for (std::int64_t c = c0; c < c1; c += block) out.push_back({c, std::min(c1, c + block)});
  return out;
}

std::int64_t cholesky_update_step(const CholeskyOptions& o, std::size_t element_bytes, std::int64_t columns) {
  if (o.update_block > 0) return o.update_block;
  return element_bytes == 8 ? kFp64UpdateBlock : std::max<std::int64_t>(columns, 1);
}

template <class T>
int cholesky_blocked_host(std::int64_t n, T* a, std::int64_t lda, const CholeskyOptions& o) {
  validate(o);
  if (n < 0) throw std::invalid_argument("cholesky_blocked_host: n = " + std::to_string(n) + " < 0");
  if (lda < std::max<std::int64_t>(1, n))
    throw std::invalid_argument("cholesky_blocked_host: lda = " + std::to_string(lda) + " < max(1, n)");
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = j; i < n; ++i)
      if (!std::isfinite(static_cast<double>(a[i + j * lda])))
        throw std::invalid_argument("cholesky_blocked_host: A(" + std::to_string(i) + ", " + std::to_string(j) +
                                    ") is NaN or Inf; the input must be finite");
  auto at = [&](std::int64_t i, std::int64_t j) { return a + i + j * lda; };
  for (const CholeskyStep& s : cholesky_schedule(n, o.nb)) {
    const std::int64_t w = s.j1 - s.j0, below = n - s.j1;
    const int panel_info = host::potrf(Uplo::lower, w, at(s.j0, s.j0), lda);
    if (panel_info < 0) throw std::runtime_error("potrf on a panel returned info " + std::to_string(panel_info));
    if (panel_info > 0) return static_cast<int>(s.j0) + panel_info;
    if (below == 0) break;
    // L21 = A21 · L11⁻ᵀ, then the trailing lower triangle, block by block as the GPU drivers do.
    host::trsm(Side::right, Uplo::lower, Op::T, Diag::non_unit, below, w, T(1), at(s.j0, s.j0), lda, at(s.j1, s.j0),
               lda);
    for (const UpdateBlock& b : update_blocks(s.j1, n, cholesky_update_step(o, sizeof(T), below))) {
      host::syrk(Uplo::lower, Op::N, b.c1 - b.c0, w, T(-1), at(b.c0, s.j0), lda, T(1), at(b.c0, b.c0), lda);
      if (b.c1 < n)
        host::gemm(Op::N, Op::T, n - b.c1, b.c1 - b.c0, w, T(-1), at(b.c1, s.j0), lda, at(b.c0, s.j0), lda, T(1),
                   at(b.c1, b.c0), lda);
    }
  }
  return 0;
}

std::int64_t triangle_transfer_width(std::int64_t n, std::size_t element_bytes, const TransferLink& link) {
  if (n <= 32) return std::max<std::int64_t>(n, 1);
  if (element_bytes == 0 || !(link.alpha_s > 0) || !(link.beta_bytes_per_s > 0))
    throw std::invalid_argument("triangle_transfer_width: element size, α and β must be positive");
  const double best = std::sqrt(2.0 * link.alpha_s * link.beta_bytes_per_s / static_cast<double>(element_bytes));
  const std::int64_t rounded = std::max<std::int64_t>(32, static_cast<std::int64_t>(std::llround(best / 32.0)) * 32);
  return std::min(rounded, n);
}

std::int64_t cholesky_hybrid_nb(std::int64_t n, std::size_t element_bytes) {
  HybridRates r = default_hybrid_rates(element_bytes);
  r.gemm_rate *= 2;  // the model's update is a GEMM of 2·m·(m − b)·b flops; a syrk does half
  return hybrid_lu_nb(n, r);
}

std::int64_t cholesky_resident_nb(std::int64_t n) {
  // H200, FP32, one-syrk updates: nb = 256 best at n = 8192 (18.4 vs 17.9 TFLOP/s at 512), 512
  // at 16384 (33.9 vs 32.4); 4096 within 2% across 128–512.
  if (n >= 12288) return 512;
  if (n >= 2048) return 256;
  return 128;
}

std::int64_t cholesky_resident_fused_nb(std::int64_t n) { return n >= 12288 ? 512 : (n >= 4096 ? 256 : 128); }

std::int64_t cholesky_dataflow_panel(std::int64_t n, std::size_t element_bytes) {
  if (element_bytes == 4) return n <= 8192 ? std::max<std::int64_t>(n, 64) : 4096;
  if (n <= 4096) return std::max<std::int64_t>(n, 64);
  return n <= 8192 ? 4096 : 2048;
}

std::int64_t cholesky_dataflow_width(std::int64_t n, const CholeskyOptions& o, std::size_t element_bytes) {
  return std::min(n, o.dataflow_panel > 0 ? o.dataflow_panel : cholesky_dataflow_panel(n, element_bytes));
}

template int cholesky_blocked_host<float>(std::int64_t, float*, std::int64_t, const CholeskyOptions&);
template int cholesky_blocked_host<double>(std::int64_t, double*, std::int64_t, const CholeskyOptions&);

}  // namespace gpufact::dense
