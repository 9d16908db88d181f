// The clock the host CPU runs at while a host-timed measurement runs (volkov08 §3.1's launch
// costs are paid in host cycles): a chain of dependent integer adds, one cycle each on x86-64
// cores, timed by the steady clock. A launch cost that moves with this clock between runs moves
// because the host's clock did, which per_launch in host cycles shows.
#pragma once

namespace gpufact::microbench {

// Hz measured over `adds` dependent adds (rounded up to a multiple of 16; ~10–30 µs at the
// default), the fastest of kHostClockChains such chains: a chain during which the thread was
// descheduled or interrupted only reads slower (on a loaded 2-core CI machine a single chain once
// read 45 MHz). 0 where the chain is not built (not x86-64). Never throws.
inline constexpr int kHostClockChains = 3;
double measure_host_clock_hz(long adds = 1L << 16);

}  // namespace gpufact::microbench
