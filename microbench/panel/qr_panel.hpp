#pragma once

namespace gpufact {
class Registry;
namespace microbench {
// volkov08.qr_panel (§3.8's panel study for the blocked QR of §5): Householder QR of an m × n panel
// by cuSOLVER geqrf, by one thread block cluster holding the panel in registers (with its cycles
// per column by phase), and by OpenBLAS with the transfers.
void register_qr_panel(Registry& registry);
}  // namespace microbench
}  // namespace gpufact
