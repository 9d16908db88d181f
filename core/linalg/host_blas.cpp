#include "core/linalg/host_blas.hpp"

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace gpufact::host {
namespace {

int to_int(std::int64_t v, const char* what) {
  if (v < 0 || v > std::numeric_limits<int>::max())
    throw std::invalid_argument(std::string(what) + " = " + std::to_string(v) +
                                " is outside the 32-bit range OpenBLAS/LAPACKE take here");
  return static_cast<int>(v);
}
CBLAS_TRANSPOSE cb(Op op) { return op == Op::N ? CblasNoTrans : CblasTrans; }
CBLAS_UPLO cb(Uplo u) { return u == Uplo::lower ? CblasLower : CblasUpper; }
CBLAS_SIDE cb(Side s) { return s == Side::left ? CblasLeft : CblasRight; }
CBLAS_DIAG cb(Diag d) { return d == Diag::unit ? CblasUnit : CblasNonUnit; }
char lp(Uplo u) { return u == Uplo::lower ? 'L' : 'U'; }

}  // namespace

template <class T>
void gemm(Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a, std::int64_t lda,
          const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc) {
  const int M = to_int(m, "m"), N = to_int(n, "n"), K = to_int(k, "k");
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasColMajor, cb(ta), cb(tb), M, N, K, alpha, a, to_int(lda, "lda"), b, to_int(ldb, "ldb"), beta, c,
                to_int(ldc, "ldc"));
  else
    cblas_dgemm(CblasColMajor, cb(ta), cb(tb), M, N, K, alpha, a, to_int(lda, "lda"), b, to_int(ldb, "ldb"), beta, c,
                to_int(ldc, "ldc"));
}

template <class T>
void syrk(Uplo uplo, Op trans, std::int64_t n, std::int64_t k, T alpha, const T* a, std::int64_t lda, T beta, T* c,
          std::int64_t ldc) {
  if constexpr (std::is_same_v<T, float>)
    cblas_ssyrk(CblasColMajor, cb(uplo), cb(trans), to_int(n, "n"), to_int(k, "k"), alpha, a, to_int(lda, "lda"),
                beta, c, to_int(ldc, "ldc"));
  else
    cblas_dsyrk(CblasColMajor, cb(uplo), cb(trans), to_int(n, "n"), to_int(k, "k"), alpha, a, to_int(lda, "lda"),
                beta, c, to_int(ldc, "ldc"));
}

template <class T>
void trsm(Side side, Uplo uplo, Op trans, Diag diag, std::int64_t m, std::int64_t n, T alpha, const T* a,
          std::int64_t lda, T* b, std::int64_t ldb) {
  if constexpr (std::is_same_v<T, float>)
    cblas_strsm(CblasColMajor, cb(side), cb(uplo), cb(trans), cb(diag), to_int(m, "m"), to_int(n, "n"), alpha, a,
                to_int(lda, "lda"), b, to_int(ldb, "ldb"));
  else
    cblas_dtrsm(CblasColMajor, cb(side), cb(uplo), cb(trans), cb(diag), to_int(m, "m"), to_int(n, "n"), alpha, a,
                to_int(lda, "lda"), b, to_int(ldb, "ldb"));
}

template <class T>
void gemv(Op trans, std::int64_t m, std::int64_t n, T alpha, const T* a, std::int64_t lda, const T* x, T beta, T* y) {
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemv(CblasColMajor, cb(trans), to_int(m, "m"), to_int(n, "n"), alpha, a, to_int(lda, "lda"), x, 1, beta, y, 1);
  else
    cblas_dgemv(CblasColMajor, cb(trans), to_int(m, "m"), to_int(n, "n"), alpha, a, to_int(lda, "lda"), x, 1, beta, y, 1);
}

template <class T>
int getrf(std::int64_t m, std::int64_t n, T* a, std::int64_t lda, int* ipiv) {
  if constexpr (std::is_same_v<T, float>)
    return LAPACKE_sgetrf(LAPACK_COL_MAJOR, to_int(m, "m"), to_int(n, "n"), a, to_int(lda, "lda"), ipiv);
  else
    return LAPACKE_dgetrf(LAPACK_COL_MAJOR, to_int(m, "m"), to_int(n, "n"), a, to_int(lda, "lda"), ipiv);
}

template <class T>
int potrf(Uplo uplo, std::int64_t n, T* a, std::int64_t lda) {
  if constexpr (std::is_same_v<T, float>)
    return LAPACKE_spotrf(LAPACK_COL_MAJOR, lp(uplo), to_int(n, "n"), a, to_int(lda, "lda"));
  else
    return LAPACKE_dpotrf(LAPACK_COL_MAJOR, lp(uplo), to_int(n, "n"), a, to_int(lda, "lda"));
}

template <class T>
int geqrf(std::int64_t m, std::int64_t n, T* a, std::int64_t lda, T* tau) {
  if constexpr (std::is_same_v<T, float>)
    return LAPACKE_sgeqrf(LAPACK_COL_MAJOR, to_int(m, "m"), to_int(n, "n"), a, to_int(lda, "lda"), tau);
  else
    return LAPACKE_dgeqrf(LAPACK_COL_MAJOR, to_int(m, "m"), to_int(n, "n"), a, to_int(lda, "lda"), tau);
}

template <class T>
void larft(std::int64_t n, std::int64_t k, const T* v, std::int64_t ldv, const T* tau, T* t, std::int64_t ldt) {
  // The _work variant: no NaN scan of V (the panel was just factored).
  if constexpr (std::is_same_v<T, float>)
    LAPACKE_slarft_work(LAPACK_COL_MAJOR, 'F', 'C', to_int(n, "n"), to_int(k, "k"), v, to_int(ldv, "ldv"), tau, t,
                        to_int(ldt, "ldt"));
  else
    LAPACKE_dlarft_work(LAPACK_COL_MAJOR, 'F', 'C', to_int(n, "n"), to_int(k, "k"), v, to_int(ldv, "ldv"), tau, t,
                        to_int(ldt, "ldt"));
}

template <class T>
int orgqr(std::int64_t m, std::int64_t n, std::int64_t k, T* a, std::int64_t lda, const T* tau) {
  if constexpr (std::is_same_v<T, float>)
    return LAPACKE_sorgqr(LAPACK_COL_MAJOR, to_int(m, "m"), to_int(n, "n"), to_int(k, "k"), a, to_int(lda, "lda"), tau);
  else
    return LAPACKE_dorgqr(LAPACK_COL_MAJOR, to_int(m, "m"), to_int(n, "n"), to_int(k, "k"), a, to_int(lda, "lda"), tau);
}

template <class T>
int trtri(Uplo uplo, Diag diag, std::int64_t n, T* a, std::int64_t lda) {
  const char d = diag == Diag::unit ? 'U' : 'N';
  if constexpr (std::is_same_v<T, float>)
    return LAPACKE_strtri(LAPACK_COL_MAJOR, lp(uplo), d, to_int(n, "n"), a, to_int(lda, "lda"));
  else
    return LAPACKE_dtrtri(LAPACK_COL_MAJOR, lp(uplo), d, to_int(n, "n"), a, to_int(lda, "lda"));
}

template <class T>
int laswp(std::int64_t n, T* a, std::int64_t lda, std::int64_t k1, std::int64_t k2, const int* ipiv) {
  if constexpr (std::is_same_v<T, float>)
    return LAPACKE_slaswp(LAPACK_COL_MAJOR, to_int(n, "n"), a, to_int(lda, "lda"), to_int(k1, "k1"), to_int(k2, "k2"),
                          ipiv, 1);
  else
    return LAPACKE_dlaswp(LAPACK_COL_MAJOR, to_int(n, "n"), a, to_int(lda, "lda"), to_int(k1, "k1"), to_int(k2, "k2"),
                          ipiv, 1);
}

template <class T>
void lacpy(std::int64_t m, std::int64_t n, const T* a, std::int64_t lda, T* b, std::int64_t ldb) {
  if constexpr (std::is_same_v<T, float>)
    LAPACKE_slacpy(LAPACK_COL_MAJOR, 'A', to_int(m, "m"), to_int(n, "n"), a, to_int(lda, "lda"), b, to_int(ldb, "ldb"));
  else
    LAPACKE_dlacpy(LAPACK_COL_MAJOR, 'A', to_int(m, "m"), to_int(n, "n"), a, to_int(lda, "lda"), b, to_int(ldb, "ldb"));
}

template <class T>
int singular_values(std::int64_t m, std::int64_t n, T* a, std::int64_t lda, T* s) {
  if (m == 0 || n == 0) return 0;
  std::vector<T> superb(static_cast<std::size_t>(std::min(m, n)));
  if constexpr (std::is_same_v<T, float>)
    return LAPACKE_sgesvd(LAPACK_COL_MAJOR, 'N', 'N', to_int(m, "m"), to_int(n, "n"), a, to_int(lda, "lda"), s,
                          nullptr, 1, nullptr, 1, superb.data());
  else
    return LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'N', 'N', to_int(m, "m"), to_int(n, "n"), a, to_int(lda, "lda"), s,
                          nullptr, 1, nullptr, 1, superb.data());
}

template <class T>
double lange(char norm, std::int64_t m, std::int64_t n, const T* a, std::int64_t lda) {
  if (m == 0 || n == 0) return 0.0;
  if constexpr (std::is_same_v<T, float>)
    return LAPACKE_slange(LAPACK_COL_MAJOR, norm, to_int(m, "m"), to_int(n, "n"), a, to_int(lda, "lda"));
  else
    return LAPACKE_dlange(LAPACK_COL_MAJOR, norm, to_int(m, "m"), to_int(n, "n"), a, to_int(lda, "lda"));
}

template <class T>
double lansy(char norm, Uplo uplo, std::int64_t n, const T* a, std::int64_t lda) {
  if (n == 0) return 0.0;
  if constexpr (std::is_same_v<T, float>)
    return LAPACKE_slansy(LAPACK_COL_MAJOR, norm, lp(uplo), to_int(n, "n"), a, to_int(lda, "lda"));
  else
    return LAPACKE_dlansy(LAPACK_COL_MAJOR, norm, lp(uplo), to_int(n, "n"), a, to_int(lda, "lda"));
}

namespace {
int core_rank(std::string core) {
  for (auto& ch : core) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (core == "skylakex" || core == "cooperlake" || core == "sapphirerapids") return 3;
  if (core == "haswell" || core == "zen") return 2;
  if (core == "sandybridge") return 1;
  return 0;
}
}  // namespace

std::string stronger_openblas_core() {
  __builtin_cpu_init();
  std::string want;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq"))
    want = "SkylakeX";
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    want = "Haswell";
  else if (__builtin_cpu_supports("avx"))
    want = "Sandybridge";
  if (want.empty() || core_rank(want) <= core_rank(openblas_get_corename())) return {};
  return want;
}

BlasInfo blas_info() {
  BlasInfo info;
  info.library = "OpenBLAS";
  info.config = openblas_get_config();
  info.core = openblas_get_corename();
  const char* forced = std::getenv("OPENBLAS_CORETYPE");
  const char* by_gpufact = std::getenv("GPUFACT_OPENBLAS_CORE_FORCED");
  info.core_source = !forced ? "detected by OpenBLAS"
                     : by_gpufact ? std::string("OPENBLAS_CORETYPE=") + forced +
                                        " set by gpufact: OpenBLAS did not recognise this CPU model; "
                                        "chosen from its feature flags"
                                  : std::string("OPENBLAS_CORETYPE=") + forced + " set by the user";
  info.threads = openblas_get_num_threads();
  switch (openblas_get_parallel()) {
    case 0: info.parallel = "sequential"; break;
    case 1: info.parallel = "pthreads"; break;
    default: info.parallel = "OpenMP"; break;
  }
  return info;
}

void set_blas_threads(int threads) { openblas_set_num_threads(threads); }
int blas_threads() { return openblas_get_num_threads(); }

#define GPUFACT_INSTANTIATE(T)                                                                                   \
  template void gemm<T>(Op, Op, std::int64_t, std::int64_t, std::int64_t, T, const T*, std::int64_t, const T*,   \
                        std::int64_t, T, T*, std::int64_t);                                                      \
  template void syrk<T>(Uplo, Op, std::int64_t, std::int64_t, T, const T*, std::int64_t, T, T*, std::int64_t);   \
  template void trsm<T>(Side, Uplo, Op, Diag, std::int64_t, std::int64_t, T, const T*, std::int64_t, T*,         \
                        std::int64_t);                                                                           \
  template void gemv<T>(Op, std::int64_t, std::int64_t, T, const T*, std::int64_t, const T*, T, T*);             \
  template int getrf<T>(std::int64_t, std::int64_t, T*, std::int64_t, int*);                                     \
  template int potrf<T>(Uplo, std::int64_t, T*, std::int64_t);                                                   \
  template int geqrf<T>(std::int64_t, std::int64_t, T*, std::int64_t, T*);                                       \
  template void larft<T>(std::int64_t, std::int64_t, const T*, std::int64_t, const T*, T*, std::int64_t);      \
  template int orgqr<T>(std::int64_t, std::int64_t, std::int64_t, T*, std::int64_t, const T*);                   \
  template int singular_values<T>(std::int64_t, std::int64_t, T*, std::int64_t, T*);                             \
  template int trtri<T>(Uplo, Diag, std::int64_t, T*, std::int64_t);                                            \
  template int laswp<T>(std::int64_t, T*, std::int64_t, std::int64_t, std::int64_t, const int*);                 \
  template void lacpy<T>(std::int64_t, std::int64_t, const T*, std::int64_t, T*, std::int64_t);                  \
  template double lange<T>(char, std::int64_t, std::int64_t, const T*, std::int64_t);                            \
  template double lansy<T>(char, Uplo, std::int64_t, const T*, std::int64_t);
GPUFACT_INSTANTIATE(float)
GPUFACT_INSTANTIATE(double)
#undef GPUFACT_INSTANTIATE

}  // namespace gpufact::host
