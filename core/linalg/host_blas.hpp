// Templated s/d wrappers over OpenBLAS (CBLAS) and LAPACKE, column-major. LAPACK routines return
// LAPACK's info (0 ok, < 0 bad argument, > 0 numerical failure at that 1-based index).
#pragma once

#include "core/linalg/blas_types.hpp"

#include <cstdint>
#include <string>

namespace gpufact::host {

using gpufact::Diag;
using gpufact::Op;
using gpufact::Side;
using gpufact::Uplo;

template <class T>
void gemm(Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a, std::int64_t lda,
          const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc);
template <class T>
void syrk(Uplo uplo, Op trans, std::int64_t n, std::int64_t k, T alpha, const T* a, std::int64_t lda, T beta, T* c,
          std::int64_t ldc);
template <class T>
void trsm(Side side, Uplo uplo, Op trans, Diag diag, std::int64_t m, std::int64_t n, T alpha, const T* a,
          std::int64_t lda, T* b, std::int64_t ldb);
template <class T>
void gemv(Op trans, std::int64_t m, std::int64_t n, T alpha, const T* a, std::int64_t lda, const T* x, T beta, T* y);

template <class T>
int getrf(std::int64_t m, std::int64_t n, T* a, std::int64_t lda, int* ipiv);
template <class T>
int potrf(Uplo uplo, std::int64_t n, T* a, std::int64_t lda);
template <class T>
int geqrf(std::int64_t m, std::int64_t n, T* a, std::int64_t lda, T* tau);
// T (k × k, upper triangle written) of the block reflector H_0 … H_{k−1} = I − V T Vᵀ (LAPACK
// larft, direct = 'F', storev = 'C'); v (n × k) holds the vectors below a unit diagonal.
template <class T>
void larft(std::int64_t n, std::int64_t k, const T* v, std::int64_t ldv, const T* tau, T* t, std::int64_t ldt);
template <class T>
int orgqr(std::int64_t m, std::int64_t n, std::int64_t k, T* a, std::int64_t lda, const T* tau);
// Singular values only (gesvd, jobu = jobvt = 'N'), descending, into s (min(m, n)); a is destroyed.
template <class T>
int singular_values(std::int64_t m, std::int64_t n, T* a, std::int64_t lda, T* s);
// Inverse of a triangular matrix in place (LAPACK trtri); only the `uplo` triangle is referenced
// and written (with Diag::unit the diagonal is neither read nor written).
template <class T>
int trtri(Uplo uplo, Diag diag, std::int64_t n, T* a, std::int64_t lda);
// Applies ipiv[k1-1 .. k2-1] (1-based, as getrf returns) to the rows of a.
template <class T>
int laswp(std::int64_t n, T* a, std::int64_t lda, std::int64_t k1, std::int64_t k2, const int* ipiv);
template <class T>
void lacpy(std::int64_t m, std::int64_t n, const T* a, std::int64_t lda, T* b, std::int64_t ldb);
// norm: 'M' max abs, '1' one-norm, 'I' infinity-norm, 'F' Frobenius.
template <class T>
double lange(char norm, std::int64_t m, std::int64_t n, const T* a, std::int64_t lda);
// Norm of a symmetric matrix stored in the `uplo` triangle.
template <class T>
double lansy(char norm, Uplo uplo, std::int64_t n, const T* a, std::int64_t lda);

struct BlasInfo {
  std::string library;   // "OpenBLAS"
  std::string config;    // openblas_get_config()
  std::string core;      // the kernel set in use
  std::string core_source;  // "detected by OpenBLAS", or why it was forced (OPENBLAS_CORETYPE)
  int threads = 0;
  std::string parallel;  // "sequential", "pthreads" or "OpenMP"
};
BlasInfo blas_info();

// OpenBLAS picks its kernels from the CPU model; a model it does not know (new server parts,
// some VMs) falls back to generic SSE3 kernels, several times slower. This returns the
// strongest kernel family the CPU's feature flags support (SkylakeX, Haswell, Sandybridge)
// when it is stronger than the one OpenBLAS chose, to be forced with OPENBLAS_CORETYPE before
// the library initializes (the driver re-executes itself for that).
std::string stronger_openblas_core();
void set_blas_threads(int threads);
int blas_threads();

}  // namespace gpufact::host
