// Host <-> device transfer bandwidths and the memory's theoretical peak, for `gridsim bench`.
#pragma once

#include <cstddef>

namespace gridsim {

enum class HostMemory { pinned, pageable };
enum class Direction { host_to_device, device_to_host };

// Bytes per second of one copy of `bytes` (best of `reps`), on the current device.
double transfer_bandwidth(HostMemory mem, Direction dir, std::size_t bytes, int reps);
// 2 x memory clock x bus width from the device attributes (bytes per second), the DRAM
// datasheet ceiling that a read+write copy is measured against.
double theoretical_memory_bandwidth();

}  // namespace gridsim
