#include "kernels/memory/pointer_chase.cuh"

#include "core/cuda/check.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace gpufact::kernels {
namespace {

// Every load, clock read and trace store is volatile asm, so the compiler keeps them in program
// order; each load's address depends on the previous load, so the hardware serializes them.
__device__ __forceinline__ long long read_clock() {
  long long t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
  return t;
}

__device__ __forceinline__ unsigned int read_smid() {
  unsigned int id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

template <ChaseAccess A>
__device__ __forceinline__ std::uint32_t load_next(const std::uint32_t* g, unsigned int s, std::uint32_t k) {
  std::uint32_t v;
  if constexpr (A == ChaseAccess::global_ca)
    asm volatile("ld.global.ca.u32 %0, [%1];" : "=r"(v) : "l"(g + k));
  else if constexpr (A == ChaseAccess::global_cg)
    asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(g + k));
  else
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(s + k * 4u));
  return v;
}

template <ChaseAccess A>
__device__ __forceinline__ unsigned long long load_next(const unsigned long long* g, unsigned int s,
                                                        unsigned long long k) {
  unsigned long long v;
  if constexpr (A == ChaseAccess::global_ca)
    asm volatile("ld.global.ca.u64 %0, [%1];" : "=l"(v) : "l"(g + k));
  else if constexpr (A == ChaseAccess::global_cg)
    asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(v) : "l"(g + k));
  else
    asm volatile("ld.shared.u64 %0, [%1];" : "=l"(v) : "r"(s + static_cast<unsigned int>(k) * 8u));
  return v;
}

__device__ __forceinline__ void store_shared(unsigned int addr, std::uint32_t v) {
  asm volatile("st.shared.u32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
}
__device__ __forceinline__ void store_shared(unsigned int addr, unsigned long long v) {
  asm volatile("st.shared.u64 [%0], %1;" ::"r"(addr), "l"(v) : "memory");
}

__host__ __device__ constexpr std::size_t round16(std::size_t b) { return (b + 15) / 16 * 16; }

// Shared mode: every thread of the block copies part of the array into shared memory (untimed,
// as volkov08 §3.3 subtracts the copy), then thread 0 alone chases.
template <class T, ChaseAccess A>
__device__ __forceinline__ void copy_in(T* s, const T* g, std::size_t elements) {
  if constexpr (A == ChaseAccess::shared) {
    for (std::size_t i = threadIdx.x; i < elements; i += blockDim.x) s[i] = g[i];
    __syncthreads();
  }
}

template <class T, ChaseAccess A>
__global__ void chase_kernel(const T* array, std::size_t elements, std::size_t region, T start, long long warm,
                             long long timed, ChaseSample* out) {
  extern __shared__ __align__(16) unsigned char dynamic_shared[];
  const T* g = array + blockIdx.x * region;
  T* s = reinterpret_cast<T*>(dynamic_shared);
  copy_in<T, A>(s, g, elements);
  if (threadIdx.x != 0) return;
  const unsigned int sbase = static_cast<unsigned int>(__cvta_generic_to_shared(s));
  T k = start;
  for (long long i = 0; i < warm; ++i) k = load_next<A>(g, sbase, k);
  const long long c0 = read_clock();
  for (long long i = 0; i < timed; i += chase_unroll) {
#pragma unroll
    for (int u = 0; u < chase_unroll; ++u) k = load_next<A>(g, sbase, k);
  }
  const long long c1 = read_clock();
  out[blockIdx.x].cycles = static_cast<unsigned long long>(c1 - c0);
  out[blockIdx.x].last_index = static_cast<unsigned long long>(k);
  out[blockIdx.x].smid = read_smid();
  out[blockIdx.x].reserved = 0;
}

template <ChaseAccess A>
__device__ __forceinline__ unsigned long long load_address(unsigned long long p) {
  unsigned long long v;
  if constexpr (A == ChaseAccess::global_ca)
    asm volatile("ld.global.ca.u64 %0, [%1];" : "=l"(v) : "l"(p));
  else
    asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(v) : "l"(p));
  return v;
}

// The same walk on absolute addresses: p = *p, nothing but the load in the dependent chain.
template <ChaseAccess A>
__global__ void chase_address_kernel(const unsigned long long* array, std::size_t region, unsigned long long start,
                                     long long warm, long long timed, ChaseSample* out) {
  extern __shared__ __align__(16) unsigned char dynamic_shared[];  // only to place one block per SM
  (void)dynamic_shared;
  if (threadIdx.x != 0) return;
  const unsigned long long* g = array + blockIdx.x * region;
  const auto base = reinterpret_cast<unsigned long long>(g);
  unsigned long long p = base + start * 8;
  for (long long i = 0; i < warm; ++i) p = load_address<A>(p);
  const long long c0 = read_clock();
  for (long long i = 0; i < timed; i += chase_unroll) {
#pragma unroll
    for (int u = 0; u < chase_unroll; ++u) p = load_address<A>(p);
  }
  const long long c1 = read_clock();
  out[blockIdx.x].cycles = static_cast<unsigned long long>(c1 - c0);
  out[blockIdx.x].last_index = (p - base) / 8;
  out[blockIdx.x].smid = read_smid();
  out[blockIdx.x].reserved = 0;
}

// Rewrites the indices of every block's array as absolute addresses (to_addresses) or back.
__global__ void rebase_kernel(unsigned long long* array, std::size_t elements, std::size_t region, int blocks,
                              bool to_addresses) {
  const std::size_t total = static_cast<std::size_t>(blocks) * elements;
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t t = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; t < total; t += step) {
    const std::size_t b = t / elements, i = t % elements;
    unsigned long long* e = array + b * region + i;
    const auto base = reinterpret_cast<unsigned long long>(array + b * region);
    *e = to_addresses ? base + *e * 8 : (*e - base) / 8;
  }
}

// Per-access trace: the loaded index is stored to shared memory before the second clock read,
// so that read waits for the load (in-order issue); the latency includes that store's issue.
// `trace_len` steps from k, recorded in shared memory (latencies at s_latency, indices at
// s_index), then copied out; returns the last index, the whole trace's cycles in *cycles.
template <class T, ChaseAccess A>
__device__ __forceinline__ T trace_steps(const T* array, unsigned int sbase, T k, int trace_len, std::uint32_t* s_latency,
                         T* s_index, std::uint32_t* latency_out, unsigned long long* index_out,
                         unsigned long long* cycles) {
  const unsigned int ibase = static_cast<unsigned int>(__cvta_generic_to_shared(s_index));
  const unsigned int lbase = static_cast<unsigned int>(__cvta_generic_to_shared(s_latency));
  const long long c0 = read_clock();
  for (int i = 0; i < trace_len; ++i) {
    const long long t0 = read_clock();
    k = load_next<A>(array, sbase, k);
    store_shared(ibase + static_cast<unsigned int>(i * sizeof(T)), k);
    const long long t1 = read_clock();
    store_shared(lbase + static_cast<unsigned int>(i * 4), static_cast<std::uint32_t>(t1 - t0));
  }
  const long long c1 = read_clock();
  for (int i = 0; i < trace_len; ++i) {
    latency_out[i] = s_latency[i];
    index_out[i] = static_cast<unsigned long long>(s_index[i]);
  }
  *cycles = static_cast<unsigned long long>(c1 - c0);
  return k;
}

template <class T, ChaseAccess A>
__global__ void chase_trace_kernel(const T* array, std::size_t elements, T start, long long warm, int trace_len,
                                   std::uint32_t* latency_out, unsigned long long* index_out, ChaseSample* out) {
  extern __shared__ __align__(16) unsigned char dynamic_shared[];
  const std::size_t array_bytes = A == ChaseAccess::shared ? round16(elements * sizeof(T)) : 0;
  T* s = reinterpret_cast<T*>(dynamic_shared);
  auto* s_latency = reinterpret_cast<std::uint32_t*>(dynamic_shared + array_bytes);
  auto* s_index = reinterpret_cast<T*>(dynamic_shared + array_bytes + round16(trace_len * sizeof(std::uint32_t)));
  copy_in<T, A>(s, array, elements);
  if (threadIdx.x != 0) return;
  const unsigned int sbase = static_cast<unsigned int>(__cvta_generic_to_shared(s));
  T k = start;
  for (long long i = 0; i < warm; ++i) k = load_next<A>(array, sbase, k);
  unsigned long long cycles = 0;
  k = trace_steps<T, A>(array, sbase, k, trace_len, s_latency, s_index, latency_out, index_out, &cycles);
  out->cycles = cycles;
  out->last_index = static_cast<unsigned long long>(k);
  out->smid = read_smid();
  out->reserved = 0;
}

__device__ __forceinline__ unsigned long long read_globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// See launch_chase_trace_two_sms. The flag is zero at launch; the walker's release store after its
// last load and the tracer's acquire loads order the two.
template <class T>
__global__ void chase_trace_two_sms_kernel(const T* array, T start, long long warm, unsigned int warm_sm,
                                           unsigned int trace_sm, int trace_len, unsigned int* flag,
                                           std::uint32_t* latency_out, unsigned long long* index_out,
                                           ChaseSample* out) {
  extern __shared__ __align__(16) unsigned char dynamic_shared[];  // also keeps one block per SM
  if (threadIdx.x != 0) return;
  const unsigned int sm = read_smid();
  constexpr ChaseAccess A = ChaseAccess::global_cg;
  if (sm == warm_sm) {
    T k = start;
    for (long long i = 0; i < warm; ++i) k = load_next<A>(array, 0u, k);
    out[1].cycles = 0;
    out[1].last_index = static_cast<unsigned long long>(k);
    out[1].smid = sm;
    out[1].reserved = 0;
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flag), "r"(1u) : "memory");
    return;
  }
  if (sm != trace_sm) return;
  const unsigned long long t_wait = read_globaltimer();
  unsigned int ready = 0;
  while (true) {
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(ready) : "l"(flag) : "memory");
    if (ready) break;
    if (read_globaltimer() - t_wait > 2'000'000'000ull) {
      out[0] = {0, 0, sm, 1};
      return;
    }
    __nanosleep(200);
  }
  auto* s_latency = reinterpret_cast<std::uint32_t*>(dynamic_shared);
  auto* s_index = reinterpret_cast<T*>(dynamic_shared + round16(trace_len * sizeof(std::uint32_t)));
  T k = static_cast<T>(out[1].last_index);  // written before the release the acquire saw
  unsigned long long cycles = 0;
  k = trace_steps<T, A>(array, 0u, k, trace_len, s_latency, s_index, latency_out, index_out, &cycles);
  out[0] = {cycles, static_cast<unsigned long long>(k), sm, 0};
}

template <class T>
__global__ void chase_walk_kernel(const T* a, std::size_t elements, T start, unsigned long long steps, ChaseWalk* out) {
  T k = start;
  unsigned long long first = 0, sum = 0, bad = 0;
  for (unsigned long long t = 1; t <= steps; ++t) {
    k = a[k];
    if (static_cast<std::size_t>(k) >= elements) {
      bad = 1;
      break;
    }
    sum += static_cast<unsigned long long>(k);
    if (k == start && first == 0) first = t;
  }
  out->first_return = first;
  out->index_sum = sum;
  out->last_index = static_cast<unsigned long long>(k);
  out->out_of_range = bad;
}

template <class T>
__global__ void fill_stride_cycle_kernel(T* a, std::size_t n, std::size_t stride) {
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t s = stride % n;
  for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < n; k += step)
    a[k] = static_cast<T>(k + s < n ? k + s : k + s - n);
}

template <class T>
__global__ void scatter_cycle_kernel(T* a, const std::uint32_t* successor, std::size_t positions, std::size_t stride) {
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t j = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; j < positions; j += step)
    a[j * stride] = static_cast<T>(static_cast<std::size_t>(successor[j]) * stride);
}

template <class T>
__global__ void count_stride_mismatches_kernel(const T* a, std::size_t n, std::size_t stride,
                                               unsigned long long* count) {
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t s = stride % n;
  unsigned long long local = 0;
  for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < n; k += step)
    local += static_cast<std::size_t>(a[k]) != (k + s < n ? k + s : k + s - n);
  for (int off = 16; off > 0; off >>= 1) local += __shfl_down_sync(0xffffffffu, local, off);
  if ((threadIdx.x & 31) == 0 && local) atomicAdd(count, local);
}

__global__ void touch_sectors_kernel(const unsigned char* p, std::size_t sectors, unsigned int* sink) {
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  unsigned int acc = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < sectors; i += step)
    acc ^= __ldcg(reinterpret_cast<const unsigned int*>(p + i * 32));
  if (acc == 0x9e3779b9u) *sink = acc;  // practically never: keeps the loads
}

unsigned grid_for(std::size_t count, unsigned threads) {
  const std::size_t blocks = (count + threads - 1) / threads;
  return static_cast<unsigned>(std::clamp<std::size_t>(blocks, 1, 8192));
}

int device_attribute(cudaDeviceAttr a) {
  int dev = 0, v = 0;
  GPUFACT_CUDA_CHECK(cudaGetDevice(&dev));
  GPUFACT_CUDA_CHECK(cudaDeviceGetAttribute(&v, a, dev));
  return v;
}

template <class Kernel>
void prepare(Kernel kernel, std::size_t shared_bytes, int carveout_percent) {
  if (shared_bytes > chase_shared_limit())
    throw std::invalid_argument("pointer chase: needs " + std::to_string(shared_bytes) +
                                " bytes of shared memory per block, the device allows " +
                                std::to_string(chase_shared_limit()));
  GPUFACT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(shared_bytes)));
  // Set every launch: the attribute stays on the function, and -1 restores the default.
  GPUFACT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                          carveout_percent < 0 ? cudaSharedmemCarveoutDefault : carveout_percent));
}

template <class T, ChaseAccess A>
void launch_chase_typed(const ChaseLaunch& p, ChaseSample* out, cudaStream_t stream) {
  const std::size_t shared = chase_shared_bytes(p);
  auto kernel = chase_kernel<T, A>;
  prepare(kernel, shared, p.carveout_percent);
  const long long timed = (p.timed_steps + chase_unroll - 1) / chase_unroll * chase_unroll;
  const unsigned threads = A == ChaseAccess::shared ? 256u : 1u;
  kernel<<<static_cast<unsigned>(p.blocks), threads, shared, stream>>>(
      static_cast<const T*>(p.array), p.elements, p.region_elements, static_cast<T>(p.start), p.warm_steps, timed, out);
  GPUFACT_CHECK_LAUNCH();
}

template <class T, ChaseAccess A>
void launch_trace_typed(const ChaseLaunch& p, int trace_len, std::uint32_t* latency_out, unsigned long long* index_out,
                        ChaseSample* out, cudaStream_t stream) {
  const std::size_t array_bytes = A == ChaseAccess::shared ? round16(p.elements * sizeof(T)) : 0;
  const std::size_t shared =
      array_bytes + round16(static_cast<std::size_t>(trace_len) * 4) + static_cast<std::size_t>(trace_len) * sizeof(T);
  auto kernel = chase_trace_kernel<T, A>;
  prepare(kernel, shared, p.carveout_percent);
  const unsigned threads = A == ChaseAccess::shared ? 256u : 1u;
  kernel<<<1, threads, shared, stream>>>(static_cast<const T*>(p.array), p.elements, static_cast<T>(p.start),
                                         p.warm_steps, trace_len, latency_out, index_out, out);
  GPUFACT_CHECK_LAUNCH();
}

void check_launch(const ChaseLaunch& p) {
  if (!p.array || p.elements == 0) throw std::invalid_argument("pointer chase: empty array");
  if (p.blocks < 1) throw std::invalid_argument("pointer chase: blocks must be >= 1");
  if (p.blocks > 1 && p.region_elements < p.elements)
    throw std::invalid_argument("pointer chase: per-block arrays overlap (region_elements < elements)");
  if (p.start >= p.elements) throw std::invalid_argument("pointer chase: start index outside the array");
  if (p.warm_steps < 0 || p.timed_steps < 0) throw std::invalid_argument("pointer chase: negative step count");
}

}  // namespace

std::size_t chase_shared_limit() {
  return static_cast<std::size_t>(device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin));
}

std::size_t chase_shared_bytes(const ChaseLaunch& p) {
  std::size_t bytes = p.access == ChaseAccess::shared ? p.elements * chase_element_bytes(p.width) : 0;
  if (p.one_block_per_sm) {
    // Two blocks would need more than the SM has (each block also holds 1 KB reserved).
    const auto per_sm = static_cast<std::size_t>(device_attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor));
    bytes = std::max(bytes, per_sm / 2 + 1024);
  }
  return bytes;
}

namespace {
void launch_chase_addresses(const ChaseLaunch& p, ChaseSample* out, cudaStream_t stream) {
  if (p.access == ChaseAccess::shared) throw std::invalid_argument("pointer chase: address chases are global only");
  auto* array = static_cast<unsigned long long*>(const_cast<void*>(p.array));
  const std::size_t region = p.blocks > 1 ? p.region_elements : p.elements;
  const std::size_t total = static_cast<std::size_t>(p.blocks) * p.elements;
  const auto rebase_blocks = static_cast<unsigned>(std::min<std::size_t>((total + 255) / 256, 4096));
  rebase_kernel<<<rebase_blocks, 256, 0, stream>>>(array, p.elements, region, p.blocks, true);
  GPUFACT_CHECK_LAUNCH();
  const std::size_t shared = chase_shared_bytes(p);
  const long long timed = (p.timed_steps + chase_unroll - 1) / chase_unroll * chase_unroll;
  auto launch = [&](auto kernel) {
    prepare(kernel, shared, p.carveout_percent);
    kernel<<<static_cast<unsigned>(p.blocks), 1, shared, stream>>>(array, region, p.start, p.warm_steps, timed, out);
    GPUFACT_CHECK_LAUNCH();
  };
  if (p.access == ChaseAccess::global_ca)
    launch(chase_address_kernel<ChaseAccess::global_ca>);
  else
    launch(chase_address_kernel<ChaseAccess::global_cg>);
  rebase_kernel<<<rebase_blocks, 256, 0, stream>>>(array, p.elements, region, p.blocks, false);
  GPUFACT_CHECK_LAUNCH();
}

}  // namespace

namespace {
template <class T>
void launch_two_sms_typed(const ChaseLaunch& p, int sms, int warm_sm, int trace_sm, int trace_len,
                          std::uint32_t* latency_out, unsigned long long* index_out, ChaseSample* out,
                          unsigned int* flag, cudaStream_t stream) {
  const auto per_sm = static_cast<std::size_t>(device_attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor));
  const std::size_t trace_bytes =
      round16(static_cast<std::size_t>(trace_len) * 4) + static_cast<std::size_t>(trace_len) * sizeof(T);
  const std::size_t shared = std::max(trace_bytes, per_sm / 2 + 1024);  // one block per SM
  auto kernel = chase_trace_two_sms_kernel<T>;
  prepare(kernel, shared, -1);
  int per_sm_blocks = 0;
  GPUFACT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm_blocks, kernel, 1, shared));
  if (per_sm_blocks < 1) throw std::invalid_argument("pointer chase on two SMs: the kernel does not fit an SM");
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(flag, 0, sizeof(unsigned int), stream));
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(out, 0, 2 * sizeof(ChaseSample), stream));
  const T* array = static_cast<const T*>(p.array);
  T start = static_cast<T>(p.start);
  long long warm = p.warm_steps;
  auto w = static_cast<unsigned int>(warm_sm), t = static_cast<unsigned int>(trace_sm);
  void* args[] = {&array, &start, &warm, &w, &t, &trace_len, &flag, &latency_out, &index_out, &out};
  GPUFACT_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), dim3(static_cast<unsigned>(sms)),
                                                 dim3(1), args, shared, stream));
  GPUFACT_CHECK_LAUNCH();
}
}  // namespace

void launch_chase_trace_two_sms(const ChaseLaunch& p, int warm_sm, int trace_sm, int trace_len,
                                std::uint32_t* latency_out, unsigned long long* index_out, ChaseSample* out,
                                unsigned int* flag, cudaStream_t stream) {
  check_launch(p);
  if (p.access != ChaseAccess::global_cg || p.width == ChaseWidth::address)
    throw std::invalid_argument("pointer chase on two SMs: global_cg loads of u32 or u64 indices only");
  if (trace_len < 1 || trace_len > chase_trace_max)
    throw std::invalid_argument("pointer chase trace: length must be 1.." + std::to_string(chase_trace_max));
  const int sms = device_attribute(cudaDevAttrMultiProcessorCount);
  if (warm_sm < 0 || trace_sm < 0 || warm_sm >= sms || trace_sm >= sms || warm_sm == trace_sm)
    throw std::invalid_argument("pointer chase on two SMs: warm_sm " + std::to_string(warm_sm) + " and trace_sm " +
                                std::to_string(trace_sm) + " must be two different SMs in 0.." +
                                std::to_string(sms - 1));
  if (p.width == ChaseWidth::u32)
    launch_two_sms_typed<std::uint32_t>(p, sms, warm_sm, trace_sm, trace_len, latency_out, index_out, out, flag,
                                        stream);
  else
    launch_two_sms_typed<unsigned long long>(p, sms, warm_sm, trace_sm, trace_len, latency_out, index_out, out, flag,
                                             stream);
}

void launch_chase(const ChaseLaunch& p, ChaseSample* out, cudaStream_t stream) {
  check_launch(p);
  if (p.width == ChaseWidth::address) return launch_chase_addresses(p, out, stream);
  const bool wide = p.width != ChaseWidth::u32;
  switch (p.access) {
    case ChaseAccess::global_ca:
      return wide ? launch_chase_typed<unsigned long long, ChaseAccess::global_ca>(p, out, stream)
                  : launch_chase_typed<std::uint32_t, ChaseAccess::global_ca>(p, out, stream);
    case ChaseAccess::global_cg:
      return wide ? launch_chase_typed<unsigned long long, ChaseAccess::global_cg>(p, out, stream)
                  : launch_chase_typed<std::uint32_t, ChaseAccess::global_cg>(p, out, stream);
    case ChaseAccess::shared:
      return wide ? launch_chase_typed<unsigned long long, ChaseAccess::shared>(p, out, stream)
                  : launch_chase_typed<std::uint32_t, ChaseAccess::shared>(p, out, stream);
  }
}

void launch_chase_trace(const ChaseLaunch& p, int trace_len, std::uint32_t* latency_out, unsigned long long* index_out,
                        ChaseSample* out, cudaStream_t stream) {
  check_launch(p);
  if (trace_len < 1 || trace_len > chase_trace_max)
    throw std::invalid_argument("pointer chase trace: length must be 1.." + std::to_string(chase_trace_max));
  const bool wide = p.width != ChaseWidth::u32;  // traces of address chases walk the 64-bit indices
  switch (p.access) {
    case ChaseAccess::global_ca:
      return wide ? launch_trace_typed<unsigned long long, ChaseAccess::global_ca>(p, trace_len, latency_out, index_out, out, stream)
                  : launch_trace_typed<std::uint32_t, ChaseAccess::global_ca>(p, trace_len, latency_out, index_out, out, stream);
    case ChaseAccess::global_cg:
      return wide ? launch_trace_typed<unsigned long long, ChaseAccess::global_cg>(p, trace_len, latency_out, index_out, out, stream)
                  : launch_trace_typed<std::uint32_t, ChaseAccess::global_cg>(p, trace_len, latency_out, index_out, out, stream);
    case ChaseAccess::shared:
      return wide ? launch_trace_typed<unsigned long long, ChaseAccess::shared>(p, trace_len, latency_out, index_out, out, stream)
                  : launch_trace_typed<std::uint32_t, ChaseAccess::shared>(p, trace_len, latency_out, index_out, out, stream);
  }
}

void launch_chase_walk(ChaseWidth w, const void* array, std::size_t elements, unsigned long long start,
                       unsigned long long steps, ChaseWalk* out, cudaStream_t stream) {
  if (w == ChaseWidth::u32)
    chase_walk_kernel<<<1, 1, 0, stream>>>(static_cast<const std::uint32_t*>(array), elements,
                                           static_cast<std::uint32_t>(start), steps, out);
  else
    chase_walk_kernel<<<1, 1, 0, stream>>>(static_cast<const unsigned long long*>(array), elements, start, steps, out);
  GPUFACT_CHECK_LAUNCH();
}

void launch_fill_stride_cycle(ChaseWidth w, void* array, std::size_t n, std::size_t stride, cudaStream_t stream) {
  if (n == 0) throw std::invalid_argument("fill_stride_cycle: empty array");
  if (w == ChaseWidth::u32)
    fill_stride_cycle_kernel<<<grid_for(n, 256), 256, 0, stream>>>(static_cast<std::uint32_t*>(array), n, stride);
  else
    fill_stride_cycle_kernel<<<grid_for(n, 256), 256, 0, stream>>>(static_cast<unsigned long long*>(array), n, stride);
  GPUFACT_CHECK_LAUNCH();
}

void launch_scatter_cycle(ChaseWidth w, void* array, const std::uint32_t* successor, std::size_t positions,
                          std::size_t stride, cudaStream_t stream) {
  if (w == ChaseWidth::u32)
    scatter_cycle_kernel<<<grid_for(positions, 256), 256, 0, stream>>>(static_cast<std::uint32_t*>(array), successor,
                                                                       positions, stride);
  else
    scatter_cycle_kernel<<<grid_for(positions, 256), 256, 0, stream>>>(static_cast<unsigned long long*>(array),
                                                                       successor, positions, stride);
  GPUFACT_CHECK_LAUNCH();
}

void launch_count_stride_cycle_mismatches(ChaseWidth w, const void* array, std::size_t n, std::size_t stride,
                                          unsigned long long* count, cudaStream_t stream) {
  if (n == 0) throw std::invalid_argument("count_stride_cycle_mismatches: empty array");
  if (w == ChaseWidth::u32)
    count_stride_mismatches_kernel<<<grid_for(n, 256), 256, 0, stream>>>(static_cast<const std::uint32_t*>(array), n,
                                                                         stride, count);
  else
    count_stride_mismatches_kernel<<<grid_for(n, 256), 256, 0, stream>>>(
        static_cast<const unsigned long long*>(array), n, stride, count);
  GPUFACT_CHECK_LAUNCH();
}

void launch_touch_sectors(const void* array, std::size_t bytes, unsigned int* sink, cudaStream_t stream) {
  const std::size_t sectors = (bytes + 31) / 32;
  touch_sectors_kernel<<<grid_for(sectors, 256), 256, 0, stream>>>(static_cast<const unsigned char*>(array), sectors,
                                                                    sink);
  GPUFACT_CHECK_LAUNCH();
}

}  // namespace gpufact::kernels
