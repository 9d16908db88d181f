#include "core/linalg/device_blas.hpp"

#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace gpufact::dev {
namespace {

int to_int(std::int64_t v, const char* what) {
  if (v < 0 || v > std::numeric_limits<int>::max())
    throw std::invalid_argument(std::string(what) + " = " + std::to_string(v) + " does not fit the 32-bit cuBLAS API");
  return static_cast<int>(v);
}
cublasOperation_t cu(Op op) { return op == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T; }
cublasFillMode_t cu(Uplo u) { return u == Uplo::lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER; }
cublasSideMode_t cu(Side s) { return s == Side::left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT; }
cublasDiagType_t cu(Diag d) { return d == Diag::unit ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT; }
template <class T>
constexpr cudaDataType_t data_type() {
  return std::is_same_v<T, float> ? CUDA_R_32F : CUDA_R_64F;
}

}  // namespace

template <class T>
void gemm(cublasHandle_t h, Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a,
          std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc) {
  if constexpr (std::is_same_v<T, float>)
    GPUFACT_CUBLAS_CHECK(cublasSgemm(h, cu(ta), cu(tb), to_int(m, "m"), to_int(n, "n"), to_int(k, "k"), &alpha, a,
                                     to_int(lda, "lda"), b, to_int(ldb, "ldb"), &beta, c, to_int(ldc, "ldc")));
  else
    GPUFACT_CUBLAS_CHECK(cublasDgemm(h, cu(ta), cu(tb), to_int(m, "m"), to_int(n, "n"), to_int(k, "k"), &alpha, a,
                                     to_int(lda, "lda"), b, to_int(ldb, "ldb"), &beta, c, to_int(ldc, "ldc")));
}

template <class T>
void syrk(cublasHandle_t h, Uplo uplo, Op trans, std::int64_t n, std::int64_t k, T alpha, const T* a,
          std::int64_t lda, T beta, T* c, std::int64_t ldc) {
  if constexpr (std::is_same_v<T, float>)
    GPUFACT_CUBLAS_CHECK(cublasSsyrk(h, cu(uplo), cu(trans), to_int(n, "n"), to_int(k, "k"), &alpha, a,
                                     to_int(lda, "lda"), &beta, c, to_int(ldc, "ldc")));
  else
    GPUFACT_CUBLAS_CHECK(cublasDsyrk(h, cu(uplo), cu(trans), to_int(n, "n"), to_int(k, "k"), &alpha, a,
                                     to_int(lda, "lda"), &beta, c, to_int(ldc, "ldc")));
}

template <class T>
void trsm(cublasHandle_t h, Side side, Uplo uplo, Op trans, Diag diag, std::int64_t m, std::int64_t n, T alpha,
          const T* a, std::int64_t lda, T* b, std::int64_t ldb) {
  if constexpr (std::is_same_v<T, float>)
    GPUFACT_CUBLAS_CHECK(cublasStrsm(h, cu(side), cu(uplo), cu(trans), cu(diag), to_int(m, "m"), to_int(n, "n"),
                                     &alpha, a, to_int(lda, "lda"), b, to_int(ldb, "ldb")));
  else
    GPUFACT_CUBLAS_CHECK(cublasDtrsm(h, cu(side), cu(uplo), cu(trans), cu(diag), to_int(m, "m"), to_int(n, "n"),
                                     &alpha, a, to_int(lda, "lda"), b, to_int(ldb, "ldb")));
}

void SolverWorkspace::reserve(std::size_t device_bytes, std::size_t host_bytes) {
  if (device_bytes > device_.bytes()) device_ = DeviceBuffer<std::byte>(device_bytes);
  if (host_bytes > host_.size()) host_.resize(host_bytes);
}

int SolverWorkspace::read_info(cudaStream_t s) {
  int value = 0;
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(&value, info_.data(), sizeof(int), cudaMemcpyDeviceToHost, s));
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
  return value;
}

template <class T>
void getrf(CusolverHandle& h, std::int64_t m, std::int64_t n, T* a, std::int64_t lda, std::int64_t* ipiv,
           SolverWorkspace& ws) {
  std::size_t dbytes = 0, hbytes = 0;
  constexpr auto type = data_type<T>();
  GPUFACT_CUSOLVER_CHECK(cusolverDnXgetrf_bufferSize(h, h.params(), m, n, type, a, lda, type, &dbytes, &hbytes));
  ws.reserve(dbytes, hbytes);
  GPUFACT_CUSOLVER_CHECK(cusolverDnXgetrf(h, h.params(), m, n, type, a, lda, ipiv, type, ws.device(),
                                          ws.device_bytes(), ws.host(), ws.host_bytes(), ws.info()));
}

template <class T>
void potrf(CusolverHandle& h, Uplo uplo, std::int64_t n, T* a, std::int64_t lda, SolverWorkspace& ws) {
  std::size_t dbytes = 0, hbytes = 0;
  constexpr auto type = data_type<T>();
  GPUFACT_CUSOLVER_CHECK(cusolverDnXpotrf_bufferSize(h, h.params(), cu(uplo), n, type, a, lda, type, &dbytes, &hbytes));
  ws.reserve(dbytes, hbytes);
  GPUFACT_CUSOLVER_CHECK(cusolverDnXpotrf(h, h.params(), cu(uplo), n, type, a, lda, type, ws.device(),
                                          ws.device_bytes(), ws.host(), ws.host_bytes(), ws.info()));
}

template <class T>
void geqrf(CusolverHandle& h, std::int64_t m, std::int64_t n, T* a, std::int64_t lda, T* tau, SolverWorkspace& ws) {
  std::size_t dbytes = 0, hbytes = 0;
  constexpr auto type = data_type<T>();
  GPUFACT_CUSOLVER_CHECK(
      cusolverDnXgeqrf_bufferSize(h, h.params(), m, n, type, a, lda, type, tau, type, &dbytes, &hbytes));
  ws.reserve(dbytes, hbytes);
  GPUFACT_CUSOLVER_CHECK(cusolverDnXgeqrf(h, h.params(), m, n, type, a, lda, type, tau, type, ws.device(),
                                          ws.device_bytes(), ws.host(), ws.host_bytes(), ws.info()));
}

template <class T>
void orgqr(CusolverHandle& h, std::int64_t m, std::int64_t n, std::int64_t k, T* a, std::int64_t lda, const T* tau,
           SolverWorkspace& ws) {
  int lwork = 0;
  const int M = to_int(m, "m"), N = to_int(n, "n"), K = to_int(k, "k"), LDA = to_int(lda, "lda");
  if constexpr (std::is_same_v<T, float>) {
    GPUFACT_CUSOLVER_CHECK(cusolverDnSorgqr_bufferSize(h, M, N, K, a, LDA, tau, &lwork));
    ws.reserve(static_cast<std::size_t>(lwork) * sizeof(T), 0);
    GPUFACT_CUSOLVER_CHECK(
        cusolverDnSorgqr(h, M, N, K, a, LDA, tau, static_cast<T*>(ws.device()), lwork, ws.info()));
  } else {
    GPUFACT_CUSOLVER_CHECK(cusolverDnDorgqr_bufferSize(h, M, N, K, a, LDA, tau, &lwork));
    ws.reserve(static_cast<std::size_t>(lwork) * sizeof(T), 0);
    GPUFACT_CUSOLVER_CHECK(
        cusolverDnDorgqr(h, M, N, K, a, LDA, tau, static_cast<T*>(ws.device()), lwork, ws.info()));
  }
}

#define GPUFACT_INSTANTIATE(T)                                                                                      \
  template void gemm<T>(cublasHandle_t, Op, Op, std::int64_t, std::int64_t, std::int64_t, T, const T*,              \
                        std::int64_t, const T*, std::int64_t, T, T*, std::int64_t);                                 \
  template void syrk<T>(cublasHandle_t, Uplo, Op, std::int64_t, std::int64_t, T, const T*, std::int64_t, T, T*,     \
                        std::int64_t);                                                                              \
  template void trsm<T>(cublasHandle_t, Side, Uplo, Op, Diag, std::int64_t, std::int64_t, T, const T*,              \
                        std::int64_t, T*, std::int64_t);                                                            \
  template void getrf<T>(CusolverHandle&, std::int64_t, std::int64_t, T*, std::int64_t, std::int64_t*,             \
                         SolverWorkspace&);                                                                         \
  template void potrf<T>(CusolverHandle&, Uplo, std::int64_t, T*, std::int64_t, SolverWorkspace&);                  \
  template void geqrf<T>(CusolverHandle&, std::int64_t, std::int64_t, T*, std::int64_t, T*, SolverWorkspace&);      \
  template void orgqr<T>(CusolverHandle&, std::int64_t, std::int64_t, std::int64_t, T*, std::int64_t, const T*,     \
                         SolverWorkspace&);
GPUFACT_INSTANTIATE(float)
GPUFACT_INSTANTIATE(double)
#undef GPUFACT_INSTANTIATE

}  // namespace gpufact::dev
