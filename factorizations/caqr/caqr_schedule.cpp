#include "factorizations/caqr/caqr_schedule.hpp"

#include <algorithm>
#include <stdexcept>

namespace gpufact::factorizations {

CaqrBlockShape parse_block_shape(const std::string& text) {
  const auto x = text.find('x');
  const auto f = text.find('f');
  try {
    if (x == std::string::npos) throw std::invalid_argument("no 'x'");
    const std::size_t cols_end = f == std::string::npos ? text.size() : f;
    if (cols_end <= x + 1 || (f != std::string::npos && f + 1 >= text.size())) throw std::invalid_argument("empty");
    std::size_t used_rows = 0, used_cols = 0, used_fan = 0;
    CaqrBlockShape s{std::stoi(text.substr(0, x), &used_rows), std::stoi(text.substr(x + 1, cols_end - x - 1), &used_cols)};
    if (used_rows != x || used_cols != cols_end - x - 1) throw std::invalid_argument("trailing text");
    if (f != std::string::npos) {
      s.fan_in = std::stoi(text.substr(f + 1), &used_fan);
      if (used_fan != text.size() - f - 1 || s.fan_in < 2) throw std::invalid_argument("fan-in");
    }
    return s;
  } catch (const std::exception&) {
    throw std::invalid_argument("block shape '" + text + "' is not ROWSxCOLS or ROWSxCOLSfFANIN (e.g. 64x16, 256x128f4)");
  }
}

CaqrSchedule make_caqr_schedule(std::int64_t m, std::int64_t n, CaqrBlockShape shape) {
  if (n < 1) throw std::invalid_argument("CAQR: n = " + std::to_string(n) + "; the matrix needs at least one column");
  if (m < n) throw std::invalid_argument("CAQR/TSQR: m = " + std::to_string(m) + " < n = " + std::to_string(n) + "; needs m >= n");
  if (shape.cols < 1 || shape.rows < shape.cols)
    throw std::invalid_argument("CAQR block shape " + shape.label() + ": needs block_cols >= 1 and block_rows >= block_cols");
  CaqrSchedule s;
  s.m = m;
  s.n = n;
  s.shape = shape;
  s.fan_in = tree_fan_in(shape);
  const std::int64_t br = shape.rows, bc = shape.cols;
  std::int64_t tau = 0;
  for (std::int64_t c0 = 0; c0 < n; c0 += bc) {
    CaqrPanel p;
    p.col0 = c0;
    p.width = std::min(bc, n - c0);
    p.rows = m - c0;
    p.blocks = (p.rows + br - 1) / br;
    p.last_block_rows = p.rows - (p.blocks - 1) * br;
    p.tau_offset = tau;
    tau += p.blocks * bc;
    std::int64_t count = p.blocks, stride = br, k_last = std::min(p.last_block_rows, p.width);
    while (count > 1) {
      CaqrTreeLevel l;
      l.children = count;
      l.child_stride = stride;
      l.last_child_rows = k_last;
      l.nodes = (count + s.fan_in - 1) / s.fan_in;
      const std::int64_t last_children = count - (l.nodes - 1) * s.fan_in;
      l.last_node_rows = last_children == 1 ? k_last : p.width;
      l.tau_offset = tau;
      tau += l.nodes * bc;
      p.levels.push_back(l);
      count = l.nodes;
      stride *= s.fan_in;
      k_last = l.last_node_rows;
    }
    s.panels.push_back(std::move(p));
  }
  s.tau_count = tau;
  return s;
}

double qr_flops(std::int64_t m, std::int64_t n) {
  const double M = static_cast<double>(m), N = static_cast<double>(n);
  return 2.0 * M * N * N - 2.0 * N * N * N / 3.0;
}

double orgqr_flops(std::int64_t m, std::int64_t n) {
  const double M = static_cast<double>(m), N = static_cast<double>(n);
  return 4.0 * M * N * N - 4.0 * N * N * N / 3.0;
}

double householder_apply_flops(std::int64_t rows, std::int64_t k, std::int64_t cols) {
  const double R = static_cast<double>(rows), K = static_cast<double>(k);
  return 4.0 * static_cast<double>(cols) * (K * R - K * (K - 1.0) / 2.0);
}

}  // namespace gpufact::factorizations
