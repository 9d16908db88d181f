#include "core/linalg/random.hpp"

#include "core/linalg/host_blas.hpp"

#include <chrono>
#include <random>

namespace gpufact {

std::uint64_t fresh_seed() {
  std::random_device rd;
  const auto now = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  std::seed_seq seq{rd(), rd(), static_cast<unsigned>(now), static_cast<unsigned>(now >> 32)};
  std::mt19937_64 gen(seq);
  return gen();
}

template <class T>
void fill_uniform(MatrixView<T> a, std::uint64_t seed, T lo, T hi) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<T> dist(lo, hi);
  for (std::int64_t j = 0; j < a.cols; ++j)
    for (std::int64_t i = 0; i < a.rows; ++i) a(i, j) = dist(gen);
}

template <class T>
void fill_spd(MatrixView<T> a, std::uint64_t seed) {
  if (a.rows != a.cols) throw std::invalid_argument("fill_spd: matrix must be square");
  const std::int64_t n = a.rows;
  HostMatrix<T> x(n, n);
  fill_uniform(x.view(), seed);
  host::syrk(host::Uplo::lower, host::Op::T, n, n, T(1), x.data(), x.ld(), T(0), a.data, a.ld);
  for (std::int64_t j = 0; j < n; ++j) {
    a(j, j) += T(0.001);
    for (std::int64_t i = 0; i < j; ++i) a(i, j) = a(j, i);  // mirror: full symmetric storage
  }
}

template void fill_uniform<float>(MatrixView<float>, std::uint64_t, float, float);
template void fill_uniform<double>(MatrixView<double>, std::uint64_t, double, double);
template void fill_spd<float>(MatrixView<float>, std::uint64_t);
template void fill_spd<double>(MatrixView<double>, std::uint64_t);

}  // namespace gpufact
