// Non-owning matrix views (pointer, rows, cols, leading dimension, layout) and an owning host matrix.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpufact {

enum class Layout { col_major, row_major };

template <class T>
struct MatrixView {
  T* data = nullptr;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t ld = 0;
  Layout layout = Layout::col_major;

  T& operator()(std::int64_t i, std::int64_t j) const {
    return layout == Layout::col_major ? data[i + j * ld] : data[i * ld + j];
  }
  operator MatrixView<const T>() const { return {data, rows, cols, ld, layout}; }
  bool empty() const noexcept { return rows == 0 || cols == 0; }
};

// A column-major matrix that owns its storage; ld defaults to rows (at least 1).
template <class T>
class HostMatrix {
 public:
  HostMatrix() = default;
  HostMatrix(std::int64_t rows, std::int64_t cols, std::int64_t ld = 0)
      : rows_(rows), cols_(cols), ld_(ld > 0 ? ld : (rows > 0 ? rows : 1)) {
    if (rows < 0 || cols < 0) throw std::invalid_argument("matrix size must be non-negative");
    if (ld_ < rows_) throw std::invalid_argument("leading dimension " + std::to_string(ld_) + " < rows " + std::to_string(rows_));
    storage_.resize(static_cast<std::size_t>(ld_ * cols_));
  }
  MatrixView<T> view() { return {storage_.data(), rows_, cols_, ld_, Layout::col_major}; }
  MatrixView<const T> view() const { return {storage_.data(), rows_, cols_, ld_, Layout::col_major}; }
  T* data() { return storage_.data(); }
  const T* data() const { return storage_.data(); }
  T& operator()(std::int64_t i, std::int64_t j) { return storage_[static_cast<std::size_t>(i + j * ld_)]; }
  const T& operator()(std::int64_t i, std::int64_t j) const { return storage_[static_cast<std::size_t>(i + j * ld_)]; }
  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  std::int64_t ld() const { return ld_; }

 private:
  std::int64_t rows_ = 0, cols_ = 0, ld_ = 1;
  std::vector<T> storage_;
};

}  // namespace gpufact
