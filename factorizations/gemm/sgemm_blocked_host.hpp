// Host replays of the GPU SGEMMs with their blocking and their floating-point operations in the
// same order (STYLE.md 10), so CI checks the algorithms without a GPU and the device tests can
// compare the kernels' C bit for bit:
//   sgemm_volkov_host: volkov08 Fig. 4, one 64×16 block of C at a time, k in bk = 4 steps
//     (tiles of 16 for AB, 4 for ABᵀ); each C(i, j) accumulates fma(a, b, c) in k order from 0,
//     then C := fma(α, c, β C) (α c when β = 0: C is not read).
//   sgemm_splitk_host: kernels/gemm/sgemm_splitk, k cut into slices of sgemm_splitk_slice(k, s);
//     each slice's partial accumulates in k order, the partials are summed in slice order.
// Column-major; tb = N: B is k × n, tb = T: B is n × k. Sizes as the launchers check them.
#pragma once

#include "core/linalg/blas_types.hpp"

#include <cstdint>

namespace gpufact::factorizations {

void sgemm_volkov_host(Op tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                       std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc);

void sgemm_splitk_host(Op tb, std::int64_t m, std::int64_t n, std::int64_t k, int splits, float alpha, const float* a,
                       std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc);

}  // namespace gpufact::factorizations
