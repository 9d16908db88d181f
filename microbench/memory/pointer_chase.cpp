#include "microbench/memory/pointer_chase.hpp"

#include "core/cuda/check.hpp"
#include "core/errors.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace gpufact::microbench {
namespace {

constexpr std::size_t kRegionAlign = 2u << 20;  // multi-SM arrays start on their own 2 MiB pages

std::size_t round_up(std::size_t v, std::size_t a) { return (v + a - 1) / a * a; }

}  // namespace

kernels::ChaseAccess chase_access_from(const std::string& s) {
  if (s == "ca") return kernels::ChaseAccess::global_ca;
  if (s == "cg") return kernels::ChaseAccess::global_cg;
  if (s == "shared") return kernels::ChaseAccess::shared;
  throw std::invalid_argument("access must be ca, cg or shared, got '" + s + "'");
}

kernels::ChaseWidth chase_width_from(const std::string& s) {
  if (s == "u32") return kernels::ChaseWidth::u32;
  if (s == "u64") return kernels::ChaseWidth::u64;
  if (s == "ptr") return kernels::ChaseWidth::address;
  throw std::invalid_argument("index must be u32, u64 or ptr, got '" + s + "'");
}

std::string to_string(kernels::ChaseAccess a) {
  switch (a) {
    case kernels::ChaseAccess::global_ca: return "ca";
    case kernels::ChaseAccess::global_cg: return "cg";
    case kernels::ChaseAccess::shared: return "shared";
  }
  return "?";
}

void validate_chase_axes(std::int64_t bytes, std::int64_t stride_bytes, kernels::ChaseWidth width) {
  const auto elem = static_cast<std::int64_t>(kernels::chase_element_bytes(width));
  const std::string w = width == kernels::ChaseWidth::u32 ? "u32" : width == kernels::ChaseWidth::u64 ? "u64" : "ptr";
  if (stride_bytes <= 0)
    throw UsageError("axis 'stride': must be > 0 bytes (a positive multiple of the " + std::to_string(elem) +
                     "-byte " + w + " element), got " + std::to_string(stride_bytes));
  if (stride_bytes % elem != 0)
    throw UsageError("axis 'stride': " + std::to_string(stride_bytes) + " is not a multiple of the " +
                     std::to_string(elem) + "-byte " + w + " element");
  if (bytes < elem)
    throw UsageError("axis 'bytes': " + std::to_string(bytes) + " is below one " + std::to_string(elem) + "-byte " +
                     w + " element");
  if (bytes % elem != 0)
    throw UsageError("axis 'bytes': " + std::to_string(bytes) + " is not a multiple of the " + std::to_string(elem) +
                     "-byte " + w + " element");
  if (width == kernels::ChaseWidth::u32 && bytes / elem > (std::int64_t{1} << 32) - 1)
    throw UsageError("axis 'bytes': " + std::to_string(bytes) + " holds more elements than 32-bit indices reach; "
                     "use -a index=u64");
}

ChaseBench::ChaseBench(std::size_t capacity_bytes, int blocks, cudaStream_t stream)
    : region_bytes_(blocks > 1 ? round_up(capacity_bytes, kRegionAlign) : round_up(capacity_bytes, 256)),
      blocks_(blocks),
      stream_(stream),
      array_(region_bytes_ * static_cast<std::size_t>(blocks)),
      samples_(static_cast<std::size_t>(blocks)),
      walk_(1),
      count_(1),
      sink_(1) {
  if (blocks < 1) throw std::invalid_argument("ChaseBench: blocks must be >= 1");
}

kernels::ChaseLaunch ChaseBench::launch_params(long long warm, long long timed) const {
  const std::size_t elem = kernels::chase_element_bytes(spec_.width);
  kernels::ChaseLaunch p;
  p.access = spec_.access;
  p.width = spec_.width;
  p.array = array_.data();
  p.elements = cycle_.elements;
  p.region_elements = blocks_ > 1 ? region_bytes_ / elem : 0;
  p.start = 0;
  p.warm_steps = warm;
  p.timed_steps = timed;
  p.blocks = blocks_;
  p.one_block_per_sm = blocks_ > 1;
  p.carveout_percent = spec_.carveout_percent;
  return p;
}

std::uint64_t ChaseBench::prepare(const ChaseSpec& spec, double walk_budget_cycles) {
  const std::size_t elem = kernels::chase_element_bytes(spec.width);
  if (spec.bytes < elem || spec.bytes > region_bytes_)
    throw std::invalid_argument("ChaseBench::prepare: " + std::to_string(spec.bytes) +
                                " bytes do not fit the allocation of " + std::to_string(region_bytes_));
  if (spec.stride_bytes == 0 || spec.stride_bytes % elem != 0)
    throw std::invalid_argument("ChaseBench::prepare: stride must be a positive multiple of the element size");
  spec_ = spec;
  ready_ = false;
  detail_.clear();
  const std::uint64_t n = spec.bytes / elem, s = spec.stride_bytes / elem;
  cycle_ = spec.random ? random_cycle(n, s, spec.seed) : stride_cycle(n, s);

  DeviceBuffer<std::uint32_t> successor;
  if (cycle_.random) {
    successor = DeviceBuffer<std::uint32_t>(cycle_.successor.size());
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(successor.data(), cycle_.successor.data(), successor.bytes(),
                                       cudaMemcpyHostToDevice, stream_));
  }
  for (int b = 0; b < blocks_; ++b) {
    void* base = array_.data() + static_cast<std::size_t>(b) * region_bytes_;
    if (cycle_.random) {
      GPUFACT_CUDA_CHECK(cudaMemsetAsync(base, 0, n * elem, stream_));
      kernels::launch_scatter_cycle(spec.width, base, successor.data(), cycle_.length, s, stream_);
    } else {
      kernels::launch_fill_stride_cycle(spec.width, base, n, s, stream_);
    }
  }

  // Walk the whole cycle when it is cheap enough, else a prefix.
  const double per_step = 1000.0 * std::min(1.0, static_cast<double>(spec.stride_bytes) / 32.0);
  const auto affordable = static_cast<std::uint64_t>(std::max(1024.0, walk_budget_cycles / per_step));
  const bool whole = cycle_.length <= affordable;
  const std::uint64_t steps = whole ? cycle_.length : std::min<std::uint64_t>(affordable, cycle_.length - 1);
  std::uint64_t bad = 0;
  kernels::ChaseWalk w{};
  for (int b = 0; b < blocks_; ++b) {
    const void* base = array_.data() + static_cast<std::size_t>(b) * region_bytes_;
    // Other blocks' arrays: a short prefix walk (their contents are also checked below).
    const std::uint64_t t = b == 0 ? steps : std::min<std::uint64_t>({steps, 1024, cycle_.length - 1});
    kernels::launch_chase_walk(spec.width, base, n, 0, t, walk_.data(), stream_);
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(&w, walk_.data(), sizeof w, cudaMemcpyDeviceToHost, stream_));
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    if (w.out_of_range) {
      ++bad;
      detail_ += "array " + std::to_string(b) + ": walk left the array; ";
      continue;
    }
    if (b == 0 && whole) {
      if (w.first_return != cycle_.length) {
        ++bad;
        detail_ += "walk returned to the start after " + std::to_string(w.first_return) + " steps, expected " +
                   std::to_string(cycle_.length) + "; ";
      }
      if (w.index_sum != cycle_.index_sum) {
        ++bad;
        detail_ += "sum of visited indices " + std::to_string(w.index_sum) + ", expected " +
                   std::to_string(cycle_.index_sum) + "; ";
      }
    } else {
      if (w.first_return != 0) {
        ++bad;
        detail_ += "array " + std::to_string(b) + ": walk returned early at step " + std::to_string(w.first_return) + "; ";
      }
      if (w.index_sum != cycle_.prefix_sum(t) || w.last_index != cycle_.index_after(t)) {
        ++bad;
        detail_ += "array " + std::to_string(b) + ": prefix walk differs from the host's cycle; ";
      }
    }
    if (!cycle_.random && (!whole || b > 0)) {
      GPUFACT_CUDA_CHECK(cudaMemsetAsync(count_.data(), 0, sizeof(unsigned long long), stream_));
      kernels::launch_count_stride_cycle_mismatches(spec.width, base, n, s, count_.data(), stream_);
      unsigned long long wrong = 0;
      GPUFACT_CUDA_CHECK(cudaMemcpyAsync(&wrong, count_.data(), sizeof wrong, cudaMemcpyDeviceToHost, stream_));
      GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream_));
      if (wrong) {
        bad += wrong;
        detail_ += "array " + std::to_string(b) + ": " + std::to_string(wrong) + " elements differ from (k+stride) mod n; ";
      }
    }
  }
  ready_ = true;
  return bad;
}

ChasePoint ChaseBench::measure(int repetitions, double budget_cycles, long long min_steps) {
  if (!ready_) throw std::logic_error("ChaseBench::measure before a successful prepare");
  ChasePoint pt;
  const auto st = chase_steps(cycle_.length, spec_.stride_bytes, min_steps, budget_cycles, 1000.0, kernels::chase_unroll);
  pt.warm_steps = st.warm;
  pt.timed_steps = st.timed;
  const std::uint64_t expected_last =
      cycle_.index_after(static_cast<std::uint64_t>(st.warm) + static_cast<std::uint64_t>(st.timed));
  const auto p = launch_params(st.warm, st.timed);
  std::vector<kernels::ChaseSample> host(static_cast<std::size_t>(blocks_));
  std::vector<std::vector<double>> per_block(static_cast<std::size_t>(blocks_));
  const bool global = spec_.access != kernels::ChaseAccess::shared;
  for (int r = 0; r < std::max(1, repetitions); ++r) {
    if (global)
      for (int b = 0; b < blocks_; ++b)
        kernels::launch_touch_sectors(array_.data() + static_cast<std::size_t>(b) * region_bytes_, spec_.bytes,
                                      sink_.data(), stream_);
    kernels::launch_chase(p, samples_.data(), stream_);
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(host.data(), samples_.data(), host.size() * sizeof(kernels::ChaseSample),
                                       cudaMemcpyDeviceToHost, stream_));
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    std::vector<double> this_rep;
    for (int b = 0; b < blocks_; ++b) {
      const auto& smp = host[static_cast<std::size_t>(b)];
      const double cpa = static_cast<double>(smp.cycles) / static_cast<double>(st.timed);
      per_block[static_cast<std::size_t>(b)].push_back(cpa);
      this_rep.push_back(cpa);
      if (smp.last_index != expected_last) {
        ++pt.mismatches;
        if (pt.mismatch_detail.empty())
          pt.mismatch_detail = "block " + std::to_string(b) + " ended at index " + std::to_string(smp.last_index) +
                               ", expected " + std::to_string(expected_last);
      }
    }
    pt.samples.push_back(median_of(this_rep));
  }
  std::set<unsigned> sms;
  for (int b = 0; b < blocks_; ++b) {
    pt.per_sm.push_back(median_of(per_block[static_cast<std::size_t>(b)]));
    pt.smids.push_back(host[static_cast<std::size_t>(b)].smid);
    sms.insert(host[static_cast<std::size_t>(b)].smid);
  }
  pt.distinct_sms = static_cast<int>(sms.size());
  pt.max_over_sms = *std::max_element(pt.per_sm.begin(), pt.per_sm.end());
  pt.cycles = blocks_ > 1 ? median_of(pt.per_sm) : median_of(pt.samples);
  if (blocks_ == 1) {
    pt.per_sm.clear();
  }
  return pt;
}

kernels::ChaseLaunch ChaseBench::trace_params(long long warm_steps) const {
  if (!ready_) throw std::logic_error("ChaseBench: trace before a successful prepare");
  auto p = launch_params(warm_steps, 0);
  p.blocks = 1;
  p.one_block_per_sm = false;
  return p;
}

ChaseTrace ChaseBench::trace(int length, long long warm_steps, bool touch_first) {
  const auto p = trace_params(warm_steps);
  DeviceBuffer<std::uint32_t> lat(static_cast<std::size_t>(length));
  DeviceBuffer<unsigned long long> idx(static_cast<std::size_t>(length));
  if (touch_first && spec_.access != kernels::ChaseAccess::shared)
    kernels::launch_touch_sectors(array_.data(), spec_.bytes, sink_.data(), stream_);
  kernels::launch_chase_trace(p, length, lat.data(), idx.data(), samples_.data(), stream_);
  return finish_trace(lat, idx, warm_steps);
}

ChaseTrace ChaseBench::trace_two_sms(int warm_sm, int trace_sm, int length, long long warm_steps) {
  const auto p = trace_params(warm_steps);
  DeviceBuffer<std::uint32_t> lat(static_cast<std::size_t>(length));
  DeviceBuffer<unsigned long long> idx(static_cast<std::size_t>(length));
  DeviceBuffer<kernels::ChaseSample> out(2);
  DeviceBuffer<unsigned int> flag(1);
  kernels::launch_chase_trace_two_sms(p, warm_sm, trace_sm, length, lat.data(), idx.data(), out.data(), flag.data(),
                                      stream_);
  kernels::ChaseSample host[2]{};
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(host, out.data(), sizeof host, cudaMemcpyDeviceToHost, stream_));
  ChaseTrace t = finish_trace(lat, idx, warm_steps);
  t.ran = host[0].reserved == 0 && host[0].smid == static_cast<unsigned>(trace_sm) &&
          host[1].smid == static_cast<unsigned>(warm_sm);
  if (!t.ran) t.mismatches = 0;  // nothing was traced: the indices are the buffer's, not a walk's
  return t;
}

ChaseTrace ChaseBench::finish_trace(const DeviceBuffer<std::uint32_t>& lat, const DeviceBuffer<unsigned long long>& idx,
                                    long long warm_steps) {
  const auto length = static_cast<int>(lat.size());
  ChaseTrace t;
  t.latency.resize(static_cast<std::size_t>(length));
  std::vector<unsigned long long> raw(static_cast<std::size_t>(length));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(t.latency.data(), lat.data(), lat.bytes(), cudaMemcpyDeviceToHost, stream_));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(raw.data(), idx.data(), idx.bytes(), cudaMemcpyDeviceToHost, stream_));
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  t.index.assign(raw.begin(), raw.end());
  // Step i of the trace is step warm + i + 1 of the walk from 0.
  std::uint64_t k = cycle_.index_after(static_cast<std::uint64_t>(warm_steps));
  for (int i = 0; i < length; ++i) {
    k = cycle_.random ? cycle_.successor[k / cycle_.stride] * cycle_.stride
                      : (k + cycle_.stride % cycle_.elements) % cycle_.elements;
    if (t.index[static_cast<std::size_t>(i)] != k) ++t.mismatches;
  }
  return t;
}

}  // namespace gpufact::microbench
