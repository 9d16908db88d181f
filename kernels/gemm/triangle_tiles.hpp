// volkov08 §4.2: the flipped-rectangle map from a 1D block index to a tile of a block-triangular
// matrix. The lower triangle of T × T tiles (row I holds I + 1 tiles) is cut in two and one piece
// flipped: rectangle row r holds tile row T−1−r (T − r tiles) followed by tile row r (T even,
// r + 1 tiles) or r − 1 (T odd, r tiles), so every row has T + 1 (even) or T (odd) tiles and the
// rectangle has exactly T(T+1)/2 cells — no idle blocks. Host and device share this code.
#pragma once

#include "kernels/common/host_device.hpp"

#include <cstdint>

namespace gpufact::kernels {

struct TriangleRectangle {
  std::int64_t rows = 0, cols = 0;  // rows × cols == T(T+1)/2
};

GPUFACT_HOST_DEVICE inline TriangleRectangle triangle_rectangle(std::int64_t tiles) {
  return {(tiles + 1) / 2, tiles + 1 - tiles % 2};
}

struct TileIndex {
  std::int64_t row = 0, col = 0;
};

// Block `id` in [0, T(T+1)/2) → lower tile (row ≥ col); transpose it for the upper triangle.
GPUFACT_HOST_DEVICE inline TileIndex lower_tile_of_block(std::int64_t id, std::int64_t tiles) {
  const std::int64_t width = tiles + 1 - tiles % 2;
  const std::int64_t r = id / width, c = id % width;
  if (c < tiles - r) return {tiles - 1 - r, c};
  return {r - tiles % 2, c - (tiles - r)};
}

}  // namespace gpufact::kernels
