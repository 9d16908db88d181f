#pragma once

namespace gpufact {
class Registry;
namespace factorizations {
// host.blas: the OpenBLAS CPU baseline every paper compares against (gemm, getrf, potrf, geqrf).
void register_host_blas(Registry& registry);
}  // namespace factorizations
}  // namespace gpufact
