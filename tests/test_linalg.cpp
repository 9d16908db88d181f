// Host BLAS/LAPACK wrappers and the scaled residuals that decide pass/fail (core/linalg). Each
// residual is shown to pass LAPACK's own factorizations at odd sizes (n = 1, not multiples of any
// block, rectangular, padded leading dimensions) and to fail a factor with one wrong entry:
// a check that cannot fail checks nothing.
#include "core/linalg/host_blas.hpp"
#include "core/linalg/matrix_view.hpp"
#include "core/linalg/random.hpp"
#include "core/linalg/residual.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace gpufact {
namespace {

constexpr double kTolerance = 30.0;  // MAGMA testers' threshold, as host.blas uses

struct Shape {
  std::int64_t m, n, pad;  // pad: extra rows in the leading dimension
};
std::string name_of(const Shape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + (s.pad ? " ld+" + std::to_string(s.pad) : "");
}

// Square and rectangular (m > n and m < n) shapes, some with padding rows.
const std::vector<Shape> kShapes{{1, 1, 0}, {17, 17, 0}, {100, 100, 0}, {17, 17, 5}, {40, 17, 0},
                                 {17, 40, 0}, {100, 33, 3},  {33, 100, 0}, {1, 7, 0},  {7, 1, 2}};
const std::vector<std::int64_t> kOrders{1, 2, 17, 100};

template <class T>
HostMatrix<T> random_matrix(std::int64_t m, std::int64_t n, std::int64_t pad, std::uint64_t seed) {
  HostMatrix<T> a(m, n, m + pad);
  // Poison the padding: the wrappers must never read or write it.
  std::fill(a.data(), a.data() + a.ld() * n, std::numeric_limits<T>::quiet_NaN());
  fill_uniform(a.view(), seed);
  return a;
}

template <class T>
HostMatrix<T> copy_of(const HostMatrix<T>& a) {
  return a;  // HostMatrix is a value type
}

template <class T>
bool padding_untouched(const HostMatrix<T>& a) {
  for (std::int64_t j = 0; j < a.cols(); ++j)
    for (std::int64_t i = a.rows(); i < a.ld(); ++i)
      if (!std::isnan(a.data()[i + j * a.ld()])) return false;
  return true;
}

// One wrong entry's size. In double an absolute 1e-2 is ~1e10 units of the scaled residuals. In
// single precision the residuals' unit, n‖A‖ε, is ~3e-4 at n = 100, so an absolute 1e-2 scores
// only ~30: there the error is made relative to ‖A‖₁ (1% of the matrix's scale).
template <class T>
T corruption(double norm) {
  return std::is_same_v<T, double> ? T(1e-2) : static_cast<T>(1e-2 * std::max(1.0, norm));
}
template <class T>
T corruption(const HostMatrix<T>& a) {
  return corruption<T>(host::lange('1', a.rows(), a.cols(), a.data(), a.ld()));
}
constexpr double kCorrupt = 10 * kTolerance;  // a corrupted factor must score at least this

template <class T>
class Linalg : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Linalg, Precisions);

TYPED_TEST(Linalg, LuResidualPassesGetrfAndCatchesACorruptFactor) {
  using T = TypeParam;
  for (const auto& s : kShapes) {
    SCOPED_TRACE(name_of(s));
    const auto a = random_matrix<T>(s.m, s.n, s.pad, 11);
    auto lu = copy_of(a);
    std::vector<int> ipiv(static_cast<std::size_t>(std::min(s.m, s.n)));
    ASSERT_EQ(host::getrf(s.m, s.n, lu.data(), lu.ld(), ipiv.data()), 0);
    EXPECT_TRUE(padding_untouched(lu));
    const double good = lu_residual<T>(a.view(), lu.view(), ipiv.data());
    EXPECT_LT(good, kTolerance);
    EXPECT_GE(good, 0.0);

    lu(0, s.n - 1) += corruption(a);  // one wrong entry of U
    const double bad = lu_residual<T>(a.view(), lu.view(), ipiv.data());
    EXPECT_GT(bad, kCorrupt) << "good " << good;

    if (s.m > 1 && s.n > 1) {  // one wrong entry of L
      auto lu2 = copy_of(a);
      host::getrf(s.m, s.n, lu2.data(), lu2.ld(), ipiv.data());
      lu2(s.m - 1, 0) += corruption(a);
      EXPECT_GT(lu_residual<T>(a.view(), lu2.view(), ipiv.data()), kCorrupt);
    }
  }
}

TYPED_TEST(Linalg, LuResidualCatchesWrongPivots) {
  using T = TypeParam;
  const auto a = random_matrix<T>(17, 17, 0, 5);
  auto lu = copy_of(a);
  std::vector<int> ipiv(17);
  ASSERT_EQ(host::getrf(17, 17, lu.data(), lu.ld(), ipiv.data()), 0);
  std::vector<int> identity(17);
  for (int i = 0; i < 17; ++i) identity[static_cast<std::size_t>(i)] = i + 1;
  ASSERT_NE(ipiv, identity) << "random matrix needed no pivoting";
  EXPECT_GT(lu_residual<T>(a.view(), lu.view(), identity.data()), kCorrupt);
}

TYPED_TEST(Linalg, GetrfReportsASingularMatrix) {
  using T = TypeParam;
  auto a = random_matrix<T>(6, 6, 0, 3);
  for (std::int64_t i = 0; i < 6; ++i) a(i, 4) = T(0);  // a zero column
  std::vector<int> ipiv(6);
  EXPECT_EQ(host::getrf(6, 6, a.data(), a.ld(), ipiv.data()), 5);  // 1-based index of the zero pivot
}

TYPED_TEST(Linalg, CholeskyResidualPassesPotrfAndCatchesACorruptFactor) {
  using T = TypeParam;
  for (std::int64_t n : kOrders) {
    for (std::int64_t pad : {0, 3}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " pad=" + std::to_string(pad));
      HostMatrix<T> a(n, n, n + pad);
      std::fill(a.data(), a.data() + a.ld() * n, std::numeric_limits<T>::quiet_NaN());
      fill_spd(a.view(), 21);
      EXPECT_TRUE(padding_untouched(a));
      auto l = copy_of(a);
      ASSERT_EQ(host::potrf(Uplo::lower, n, l.data(), l.ld()), 0) << "fill_spd must give an SPD matrix";
      const double good = cholesky_residual<T>(a.view(), l.view());
      EXPECT_LT(good, kTolerance);
      l(n - 1, 0) += corruption(a);
      EXPECT_GT(cholesky_residual<T>(a.view(), l.view()), kCorrupt) << "good " << good;
      // The upper triangle of L is ignored, whatever it holds.
      auto l2 = copy_of(a);
      host::potrf(Uplo::lower, n, l2.data(), l2.ld());
      if (n > 1) l2(0, n - 1) = T(1e6);
      EXPECT_LT(cholesky_residual<T>(a.view(), l2.view()), kTolerance);
    }
  }
}

TYPED_TEST(Linalg, FillSpdIsSymmetricAndPotrfAcceptsIt) {
  using T = TypeParam;
  for (std::int64_t n : {1, 5, 64, 257}) {
    HostMatrix<T> a(n, n);
    fill_spd(a.view(), 1234);
    for (std::int64_t j = 0; j < n; ++j) {
      EXPECT_GT(a(j, j), T(0));
      for (std::int64_t i = 0; i < j; ++i) ASSERT_EQ(a(i, j), a(j, i)) << i << "," << j;
    }
    EXPECT_EQ(host::potrf(Uplo::lower, n, a.data(), a.ld()), 0) << "n=" << n;
  }
  HostMatrix<T> rect(3, 4);
  EXPECT_THROW(fill_spd(rect.view(), 1), std::invalid_argument);
}

TYPED_TEST(Linalg, PotrfRejectsAnIndefiniteMatrix) {
  using T = TypeParam;
  HostMatrix<T> a(5, 5);
  fill_spd(a.view(), 7);
  a(3, 3) = T(-1);
  EXPECT_EQ(host::potrf(Uplo::lower, 5, a.data(), a.ld()), 4);  // leading minor 4 is not positive definite
}

TYPED_TEST(Linalg, QrResidualPassesGeqrfAndCatchesCorruptFactors) {
  using T = TypeParam;
  for (const auto& s : kShapes) {
    SCOPED_TRACE(name_of(s));
    const auto a = random_matrix<T>(s.m, s.n, s.pad, 31);
    auto qr = copy_of(a);
    std::vector<T> tau(static_cast<std::size_t>(std::min(s.m, s.n)));
    ASSERT_EQ(host::geqrf(s.m, s.n, qr.data(), qr.ld(), tau.data()), 0);
    EXPECT_TRUE(padding_untouched(qr));
    const auto good = qr_residual<T>(a.view(), qr.view(), tau.data());
    EXPECT_LT(good.factorization, kTolerance);
    EXPECT_LT(good.orthogonality, kTolerance);

    auto bad_r = qr;
    bad_r(0, s.n - 1) += corruption(a);  // one wrong entry of R
    const auto e1 = qr_residual<T>(a.view(), bad_r.view(), tau.data());
    EXPECT_GT(e1.factorization, kCorrupt);
    EXPECT_LT(e1.orthogonality, kTolerance);  // Q is untouched

    if (s.m > 1 && s.n > 1) {
      auto bad_v = qr;
      bad_v(s.m - 1, 0) += corruption<T>(10.0);  // a wrong Householder vector entry: Q is no longer orthogonal
      const auto e2 = qr_residual<T>(a.view(), bad_v.view(), tau.data());
      EXPECT_GT(e2.orthogonality, kCorrupt);
    }
  }
}

TYPED_TEST(Linalg, OrthogonalityError) {
  using T = TypeParam;
  // Columns of the identity: exactly orthonormal.
  HostMatrix<T> q(9, 4);
  for (std::int64_t j = 0; j < 4; ++j) q(j, j) = T(1);
  EXPECT_EQ(orthogonality_error<T>(q.view()), 0.0);
  // A random matrix is far from orthonormal.
  const auto r = random_matrix<T>(9, 4, 0, 8);
  EXPECT_GT(orthogonality_error<T>(r.view()), 1e5);
  // One column scaled by 1 + 1e-3.
  q(2, 2) = T(1.001);
  EXPECT_GT(orthogonality_error<T>(q.view()), kCorrupt);
}

TYPED_TEST(Linalg, GemmErrorBelowBoundForCorrectProductsAndFarAboveForOneWrongElement) {
  using T = TypeParam;
  struct Case {
    std::int64_t m, n, k;
    char ta, tb;
    T alpha, beta;
  };
  const std::vector<Case> cases{{1, 1, 1, 'N', 'N', T(1), T(0)},      {17, 17, 17, 'N', 'N', T(1), T(1)},
                                {100, 33, 64, 'N', 'N', T(-2), T(0.5)}, {33, 100, 17, 'T', 'N', T(1), T(1)},
                                {20, 30, 40, 'N', 'T', T(0.5), T(-1)},  {64, 64, 100, 'T', 'T', T(1), T(0)}};
  for (const auto& c : cases) {
    SCOPED_TRACE(std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + " " + c.ta + c.tb);
    const bool at = c.ta == 'T', bt = c.tb == 'T';
    const auto a = random_matrix<T>(at ? c.k : c.m, at ? c.m : c.k, 0, 41);
    const auto b = random_matrix<T>(bt ? c.n : c.k, bt ? c.k : c.n, 0, 42);
    const auto c0 = random_matrix<T>(c.m, c.n, 0, 43);
    auto out = copy_of(c0);
    host::gemm(at ? Op::T : Op::N, bt ? Op::T : Op::N, c.m, c.n, c.k, c.alpha, a.data(), a.ld(), b.data(), b.ld(),
               c.beta, out.data(), out.ld());
    const double good = gemm_error<T>(c.ta, c.tb, a.view(), b.view(), c0.view(), out.view(), c.alpha, c.beta);
    EXPECT_LT(good, static_cast<double>(c.k) + 2);

    // One element off by 1e-3 (well under 1% of a typical |C|) is far outside the bound.
    out(c.m / 2, c.n / 2) += T(1e-3);
    const double bad = gemm_error<T>(c.ta, c.tb, a.view(), b.view(), c0.view(), out.view(), c.alpha, c.beta);
    EXPECT_GT(bad, 2 * (static_cast<double>(c.k) + 2)) << "good " << good;

    out(c.m / 2, c.n / 2) = std::numeric_limits<T>::quiet_NaN();
    EXPECT_TRUE(std::isinf(gemm_error<T>(c.ta, c.tb, a.view(), b.view(), c0.view(), out.view(), c.alpha, c.beta)));
  }
}

TYPED_TEST(Linalg, GemmErrorRejectsInconsistentShapes) {
  using T = TypeParam;
  const auto a = random_matrix<T>(3, 4, 0, 1), b = random_matrix<T>(5, 2, 0, 2), c = random_matrix<T>(3, 2, 0, 3);
  EXPECT_THROW(gemm_error<T>('N', 'N', a.view(), b.view(), c.view(), c.view(), T(1), T(0)), std::invalid_argument);
}

TYPED_TEST(Linalg, GemmMatchesNaiveProduct) {
  using T = TypeParam;
  const std::int64_t m = 7, n = 5, k = 3;
  const auto a = random_matrix<T>(k, m, 2, 1);  // used transposed
  const auto b = random_matrix<T>(k, n, 0, 2);
  HostMatrix<T> c(m, n, m + 1);
  host::gemm(Op::T, Op::N, m, n, k, T(2), a.data(), a.ld(), b.data(), b.ld(), T(0), c.data(), c.ld());
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double ref = 0;
      for (std::int64_t l = 0; l < k; ++l) ref += 2.0 * a(l, i) * b(l, j);
      EXPECT_NEAR(c(i, j), ref, 1e-5) << i << "," << j;
    }
}

TYPED_TEST(Linalg, TrsmSolvesATriangularSystem) {
  using T = TypeParam;
  const std::int64_t n = 17, nrhs = 3;
  HostMatrix<T> l(n, n);
  fill_spd(l.view(), 9);
  ASSERT_EQ(host::potrf(Uplo::lower, n, l.data(), l.ld()), 0);
  const auto x = random_matrix<T>(n, nrhs, 0, 10);
  HostMatrix<T> lower(n, n);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = j; i < n; ++i) lower(i, j) = l(i, j);
  HostMatrix<T> b(n, nrhs);
  host::gemm(Op::N, Op::N, n, nrhs, n, T(1), lower.data(), lower.ld(), x.data(), x.ld(), T(0), b.data(), b.ld());
  host::trsm(Side::left, Uplo::lower, Op::N, Diag::non_unit, n, nrhs, T(1), l.data(), l.ld(), b.data(), b.ld());
  const double tol = std::is_same_v<T, float> ? 1e-3 : 1e-10;
  for (std::int64_t j = 0; j < nrhs; ++j)
    for (std::int64_t i = 0; i < n; ++i) EXPECT_NEAR(b(i, j), x(i, j), tol);
}

TYPED_TEST(Linalg, NormsOfAKnownMatrix) {
  using T = TypeParam;
  HostMatrix<T> a(2, 3, 4);  // [1 -2 3; -4 5 -6], padded
  const T v[2][3] = {{1, -2, 3}, {-4, 5, -6}};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) a(i, j) = v[i][j];
  EXPECT_DOUBLE_EQ(host::lange('M', 2, 3, a.data(), a.ld()), 6.0);
  EXPECT_DOUBLE_EQ(host::lange('1', 2, 3, a.data(), a.ld()), 9.0);
  EXPECT_DOUBLE_EQ(host::lange('I', 2, 3, a.data(), a.ld()), 15.0);
  EXPECT_NEAR(host::lange('F', 2, 3, a.data(), a.ld()), std::sqrt(91.0), 1e-6);
  EXPECT_EQ(host::lange('1', 0, 3, a.data(), a.ld()), 0.0);
  HostMatrix<T> s(2, 2);  // lower triangle of [2 -7; -7 1]; the upper holds junk
  s(0, 0) = 2;
  s(1, 0) = -7;
  s(1, 1) = 1;
  s(0, 1) = 100;
  EXPECT_DOUBLE_EQ(host::lansy('1', Uplo::lower, 2, s.data(), s.ld()), 9.0);
}

TYPED_TEST(Linalg, LaswpAppliesGetrfPivots) {
  using T = TypeParam;
  HostMatrix<T> a(3, 2);
  for (int i = 0; i < 3; ++i) {
    a(i, 0) = T(i);
    a(i, 1) = T(10 + i);
  }
  const int ipiv[2] = {3, 3};  // swap rows 1,3 then rows 2,3
  host::laswp(2, a.data(), a.ld(), 1, 2, ipiv);
  EXPECT_EQ(a(0, 0), T(2));
  EXPECT_EQ(a(1, 0), T(0));
  EXPECT_EQ(a(2, 0), T(1));
  EXPECT_EQ(a(1, 1), T(10));
}

TYPED_TEST(Linalg, FillUniformIsSeededAndInRange) {
  using T = TypeParam;
  auto a = random_matrix<T>(50, 7, 3, 99), b = random_matrix<T>(50, 7, 3, 99), c = random_matrix<T>(50, 7, 3, 100);
  EXPECT_TRUE(padding_untouched(a));
  bool differs = false;
  for (std::int64_t j = 0; j < 7; ++j)
    for (std::int64_t i = 0; i < 50; ++i) {
      EXPECT_EQ(a(i, j), b(i, j));
      EXPECT_GE(a(i, j), T(-1));
      EXPECT_LT(a(i, j), T(1));
      differs = differs || a(i, j) != c(i, j);
    }
  EXPECT_TRUE(differs);
  HostMatrix<T> r(100, 1);
  fill_uniform(r.view(), 5, T(2), T(3));
  for (std::int64_t i = 0; i < 100; ++i) {
    EXPECT_GE(r(i, 0), T(2));
    EXPECT_LT(r(i, 0), T(3));
  }
}

// ‖E‖₂ by Lanczos (symmetric_norm2) against what is known: exact spectra and full SVDs.
TEST(SymmetricNorm2, KnownSmallMatrixAndZero) {
  HostMatrix<double> g(3, 3);
  g(0, 0) = 2;
  g(1, 1) = 5;
  g(2, 2) = 1;
  g(1, 0) = 1;  // the lower triangle only; eigenvalues of [[2,1],[1,5]]: (7 ± √13)/2
  EXPECT_NEAR(symmetric_norm2(g.view()), (7 + std::sqrt(13.0)) / 2, 1e-12);
  g(2, 2) = -6;  // the largest magnitude is negative now
  EXPECT_NEAR(symmetric_norm2(g.view()), 6.0, 1e-12);
  EXPECT_EQ(symmetric_norm2(HostMatrix<double>(5, 5).view()), 0.0);
  EXPECT_EQ(symmetric_norm2(HostMatrix<double>(0, 0).view()), 0.0);
  EXPECT_THROW(symmetric_norm2(HostMatrix<double>(3, 4).view()), std::invalid_argument);
}

TEST(SymmetricNorm2, RandomMatricesMatchTheSvd) {
  for (const std::int64_t n : {7, 100, 128}) {  // at most 128: Lanczos runs to n steps, exact
    HostMatrix<double> e(n, n), full(n, n);
    fill_uniform(e.view(), 17 + static_cast<std::uint64_t>(n));
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = j; i < n; ++i) full(i, j) = full(j, i) = e(i, j);
    std::vector<double> sigma(static_cast<std::size_t>(n));
    ASSERT_EQ(host::singular_values(n, n, full.data(), full.ld(), sigma.data()), 0);
    EXPECT_NEAR(symmetric_norm2(e.view()), sigma.front(), 1e-10 * sigma.front()) << "n = " << n;
  }
}

TEST(SymmetricNorm2, LargeMatricesFindTheirExtremes) {
  constexpr std::int64_t n = 3000;
  // A spectrum spread evenly (diagonal, −1 … 0.9, the larger end negative) far beyond the 128
  // steps: the extreme Ritz value comes within 1e-5 of the end, from inside (1.4e-6 measured).
  HostMatrix<double> d(n, n);
  for (std::int64_t i = 0; i < n; ++i) d(i, i) = -1.0 + 1.9 * static_cast<double>(i) / (n - 1);
  const double edge = symmetric_norm2(d.view());
  EXPECT_LE(edge, 1.0 + 1e-12);
  EXPECT_GT(edge, 1.0 - 1e-5);
  // One bad direction among O(ε) noise, as a Q with one non-orthogonal column gives I − QᵀQ.
  HostMatrix<double> e(n, n);
  fill_uniform(e.view(), 5);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = j; i < n; ++i) e(i, j) *= 1e-16;
  e(1234, 1234) += 0.25;
  const double norm = symmetric_norm2(e.view());
  EXPECT_GT(norm, 0.25 - 1e-12);
  EXPECT_LT(norm, 0.25 + 1e-12);
}

// QᵀQ of LAPACK's orthonormal FP64 Q of 10⁶ × 10 summed pairwise over row chunks, against exact
// products (TwoProd by FMA) summed with compensation (Neumaier): entry by entry within one √n·ε
// unit, well inside what the QR tests' ‖I − QᵀQ‖₂ ≤ 10 √n ε needs of the check itself.
TEST(PairwiseGram, MatchesCompensatedSumsOnATallOrthonormalQ) {
  constexpr std::int64_t m = 1000000, n = 10;
  HostMatrix<double> q(m, n);
  fill_uniform(q.view(), 4321);
  std::vector<double> tau(n);
  ASSERT_EQ(host::geqrf<double>(m, n, q.data(), q.ld(), tau.data()), 0);
  ASSERT_EQ(host::orgqr<double>(m, n, n, q.data(), q.ld(), tau.data()), 0);
  HostMatrix<double> gram(n, n);
  pairwise_gram(q, gram);
  const double unit = std::sqrt(static_cast<double>(n)) * std::numeric_limits<double>::epsilon() / 2;
  double worst = 0;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = j; i < n; ++i) {
      double sum = 0, compensation = 0;
      const auto add = [&](double x) {
        const double t = sum + x;
        compensation += std::abs(sum) >= std::abs(x) ? (sum - t) + x : (x - t) + sum;
        sum = t;
      };
      for (std::int64_t r = 0; r < m; ++r) {
        const double p = q(r, i) * q(r, j);
        add(p);
        add(std::fma(q(r, i), q(r, j), -p));
      }
      worst = std::max(worst, std::abs(gram(i, j) - (sum + compensation)));
    }
  // An ulp of QᵀQ's diagonal (≈ 1) is 0.63 √n ε here; the pairwise sums stay within 1 √n ε (0.63
  // measured), where a dsyrk over all rows reported ‖I − QᵀQ‖₂ 3 to 10 times too large.
  EXPECT_LT(worst / unit, 1.0) << "pairwise against compensated sums, in √n ε";
  HostMatrix<double> wrong(n, n + 1);
  EXPECT_THROW(pairwise_gram(q, wrong), std::invalid_argument);
}

TEST(LinalgMisc, FreshSeedsDiffer) { EXPECT_NE(fresh_seed(), fresh_seed()); }

TEST(LinalgMisc, BlasThreadsCanBeSet) {
  const int before = host::blas_threads();
  host::set_blas_threads(1);
  EXPECT_EQ(host::blas_threads(), 1);
  host::set_blas_threads(before);
  EXPECT_EQ(host::blas_threads(), before);
  const auto info = host::blas_info();
  EXPECT_EQ(info.library, "OpenBLAS");
  EXPECT_FALSE(info.config.empty());
}

TEST(LinalgMisc, HostMatrixRejectsBadShapes) {
  EXPECT_THROW(HostMatrix<double>(-1, 2), std::invalid_argument);
  EXPECT_THROW(HostMatrix<double>(5, 2, 3), std::invalid_argument);
  HostMatrix<double> empty(0, 0);
  EXPECT_EQ(empty.ld(), 1);
}

TEST(LinalgMisc, IntegerOverflowOfSizesIsRejected) {
  // LAPACKE takes 32-bit ints: a 64-bit size that does not fit is an error, not a wrap.
  double x = 0;
  EXPECT_THROW(host::lange('M', std::int64_t{1} << 32, 1, &x, std::int64_t{1} << 32), std::invalid_argument);
}

}  // namespace
}  // namespace gpufact
