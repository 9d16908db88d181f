#include "factorizations/dense/tslu_host.hpp"

#include "kernels/lu/tslu.cuh"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace gpufact::dense {
namespace {

// A stack of up to kTsluBlockRows candidate rows (row −1: padding, never chosen), b values each.
template <class T>
struct Stack {
  std::int64_t b = 0;
  std::vector<std::int64_t> row;
  std::vector<T> value;  // row-major: value[s * b + c]
  T& at(std::size_t s, std::int64_t c) { return value[s * static_cast<std::size_t>(b) + static_cast<std::size_t>(c)]; }
};

// getf2's multiplier x / pivot as LAPACK ?getf2 forms it (and the kernel's multiplier): by the
// reciprocal when |pivot| >= sfmin, unscaled on an exactly zero pivot.
template <class T>
T tslu_multiplier(T x, T pivot) {
  if (pivot == T(0)) return x;
  if (std::fabs(pivot) >= std::numeric_limits<T>::min()) return x * (T(1) / pivot);
  return x / pivot;
}

// The kernel's select_pivots: getf2 with partial pivoting, rows not moved, multipliers stored in
// place, first largest |value| wins. Returns the stack positions of the pivots in order.
template <class T>
std::vector<std::size_t> select_pivots(Stack<T>& s) {
  std::vector<bool> open(s.row.size());
  for (std::size_t t = 0; t < s.row.size(); ++t) open[t] = s.row[t] >= 0;
  std::vector<std::size_t> winners;
  for (std::int64_t j = 0; j < s.b; ++j) {
    T best = T(-1);
    std::size_t p = 0;
    for (std::size_t t = 0; t < s.row.size(); ++t) {
      const T v = open[t] ? std::fabs(s.at(t, j)) : T(-1);
      if (v > best) best = v, p = t;
    }
    if (best < T(0)) break;
    winners.push_back(p);
    open[p] = false;
    const T pivot = s.at(p, j);
    for (std::size_t t = 0; t < s.row.size(); ++t) {
      if (!open[t]) continue;
      const T l = tslu_multiplier(s.at(t, j), pivot);
      s.at(t, j) = l;
      for (std::int64_t c = j + 1; c < s.b; ++c) s.at(t, c) = std::fma(-l, s.at(p, c), s.at(t, c));
    }
  }
  return winners;
}

// A candidate set: the winners' rows and original values.
template <class T>
struct Candidates {
  std::vector<std::int64_t> row;
  std::vector<std::vector<T>> value;
};

template <class T>
Candidates<T> winners_of(const Stack<T>& original, const std::vector<std::size_t>& winners) {
  Candidates<T> c;
  for (std::size_t w : winners) {
    c.row.push_back(original.row[w]);
    c.value.emplace_back(original.value.begin() + static_cast<std::ptrdiff_t>(w * original.b),
                         original.value.begin() + static_cast<std::ptrdiff_t>((w + 1) * original.b));
  }
  return c;
}

void check_args(std::int64_t m, std::int64_t b, std::int64_t lda) {
  if (b < 1 || b > kernels::kTsluMaxWidth)
    throw std::invalid_argument("tslu_host: b = " + std::to_string(b) + " is outside 1.." +
                                std::to_string(kernels::kTsluMaxWidth));
  if (m < 0) throw std::invalid_argument("tslu_host: m = " + std::to_string(m) + " < 0");
  if (lda < std::max<std::int64_t>(1, m))
    throw std::invalid_argument("tslu_host: lda = " + std::to_string(lda) + " < max(1, m)");
}

// The whole tournament; returns the root's stack after its getf2 (pivot rows factored in place)
// and the root's winners (stack positions).
template <class T>
std::pair<Stack<T>, std::vector<std::size_t>> tournament(std::int64_t m, std::int64_t b, const T* a,
                                                         std::int64_t lda) {
  const std::int64_t rows_per_block = kernels::kTsluBlockRows;
  const std::size_t fan = static_cast<std::size_t>(kernels::tslu_fan_in(b));
  // Level 0: one stack per row block, rows in panel order.
  std::vector<Stack<T>> stacks;
  for (std::int64_t r0 = 0; r0 < m; r0 += rows_per_block) {
    Stack<T> s;
    s.b = b;
    for (std::int64_t r = r0; r < std::min(m, r0 + rows_per_block); ++r) {
      s.row.push_back(r);
      for (std::int64_t c = 0; c < b; ++c) s.value.push_back(a[r + c * lda]);
    }
    stacks.push_back(std::move(s));
  }
  for (;;) {
    std::vector<Candidates<T>> sets;
    for (auto& s : stacks) {
      const Stack<T> original = s;
      const auto winners = select_pivots(s);
      if (stacks.size() == 1) return {s, winners};
      sets.push_back(winners_of(original, winners));
    }
    // Next level: fan sets per stack, each padded to b rows in the kernel (padding never wins,
    // so it is left out here).
    std::vector<Stack<T>> next;
    for (std::size_t g0 = 0; g0 < sets.size(); g0 += fan) {
      Stack<T> s;
      s.b = b;
      for (std::size_t g = g0; g < std::min(sets.size(), g0 + fan); ++g)
        for (std::int64_t k = 0; k < b; ++k) {
          const bool real = static_cast<std::size_t>(k) < sets[g].row.size();
          s.row.push_back(real ? sets[g].row[static_cast<std::size_t>(k)] : -1);
          for (std::int64_t c = 0; c < b; ++c)
            s.value.push_back(real ? sets[g].value[static_cast<std::size_t>(k)][static_cast<std::size_t>(c)] : T(0));
        }
      next.push_back(std::move(s));
    }
    stacks = std::move(next);
  }
}

}  // namespace

template <class T>
std::vector<std::int64_t> tslu_pivot_rows(std::int64_t m, std::int64_t b, const T* a, std::int64_t lda) {
  check_args(m, b, lda);
  if (m == 0) return {};
  const auto [root, winners] = tournament(m, b, a, lda);
  std::vector<std::int64_t> rows;
  for (std::size_t w : winners) rows.push_back(root.row[w]);
  return rows;
}

std::vector<std::int64_t> interchanges_from_pivot_rows(const std::vector<std::int64_t>& pivot_rows) {
  // Replay on the touched rows only: where[r] = position of original row r, at[p] = row at p.
  std::vector<std::int64_t> ipiv;
  std::vector<std::pair<std::int64_t, std::int64_t>> moved;  // (row, position) of rows away from home
  auto position_of = [&](std::int64_t r) {
    for (const auto& [row, pos] : moved)
      if (row == r) return pos;
    return r;
  };
  auto row_at = [&](std::int64_t p) {
    for (const auto& [row, pos] : moved)
      if (pos == p) return row;
    return p;
  };
  auto set_position = [&](std::int64_t r, std::int64_t p) {
    for (auto& [row, pos] : moved)
      if (row == r) {
        pos = p;
        return;
      }
    moved.push_back({r, p});
  };
  for (std::size_t k = 0; k < pivot_rows.size(); ++k) {
    const auto kk = static_cast<std::int64_t>(k);
    const std::int64_t loc = position_of(pivot_rows[k]), resident = row_at(kk);
    if (loc < kk) throw std::invalid_argument("interchanges_from_pivot_rows: row " + std::to_string(pivot_rows[k]) + " repeats");
    ipiv.push_back(loc + 1);
    if (loc == kk) continue;
    set_position(pivot_rows[k], kk);
    set_position(resident, loc);
  }
  return ipiv;
}

template <class T>
int tslu_host(std::int64_t m, std::int64_t b, T* a, std::int64_t lda, std::int64_t* ipiv) {
  check_args(m, b, lda);
  if (m == 0) return 0;
  const auto [root, winners] = tournament(m, b, a, lda);
  std::vector<std::int64_t> rows;
  for (std::size_t w : winners) rows.push_back(root.row[w]);
  const auto piv = interchanges_from_pivot_rows(rows);
  const std::int64_t top = static_cast<std::int64_t>(piv.size());
  for (std::int64_t k = 0; k < top; ++k) {
    ipiv[k] = piv[static_cast<std::size_t>(k)];
    const std::int64_t p = ipiv[k] - 1;
    if (p != k)
      for (std::int64_t c = 0; c < b; ++c) std::swap(a[k + c * lda], a[p + c * lda]);
  }
  // The top: the root's getf2 factored the pivot rows in pivot order (kernel: the same rows).
  int info = 0;
  for (std::int64_t k = 0; k < top; ++k) {
    for (std::int64_t c = 0; c < b; ++c) a[k + c * lda] = root.value[winners[static_cast<std::size_t>(k)] * static_cast<std::size_t>(b) + static_cast<std::size_t>(c)];
    if (a[k + k * lda] == T(0) && info == 0) info = static_cast<int>(k + 1);
  }
  // L21 = A21·U11⁻¹, each row as getf2 treats a non-pivot row.
  for (std::int64_t r = top; r < m; ++r)
    for (std::int64_t j = 0; j < b; ++j) {
      const T l = tslu_multiplier(a[r + j * lda], a[j + j * lda]);
      a[r + j * lda] = l;
      for (std::int64_t c = j + 1; c < b; ++c) a[r + c * lda] = std::fma(-l, a[j + c * lda], a[r + c * lda]);
    }
  return info;
}

template std::vector<std::int64_t> tslu_pivot_rows<float>(std::int64_t, std::int64_t, const float*, std::int64_t);
template std::vector<std::int64_t> tslu_pivot_rows<double>(std::int64_t, std::int64_t, const double*, std::int64_t);
template int tslu_host<float>(std::int64_t, std::int64_t, float*, std::int64_t, std::int64_t*);
template int tslu_host<double>(std::int64_t, std::int64_t, double*, std::int64_t, std::int64_t*);

}  // namespace gpufact::dense
