#include "platform/device_map.hpp"

#include <algorithm>
#include <map>

namespace gridsim {

std::vector<DeviceAssignment> assign_devices(const std::vector<std::vector<std::string>>& visible) {
    const bool same_view =
        std::all_of(visible.begin(), visible.end(), [&](const auto& v) { return v == visible[0]; });
    std::map<std::string, int> users;  // ranks per physical device so far
    std::vector<DeviceAssignment> out(visible.size());
    for (std::size_t r = 0; r < visible.size(); ++r) {
        const std::vector<std::string>& mine = visible[r];
        if (mine.empty()) continue;
        const std::size_t n = mine.size();
        const std::size_t start = same_view ? r % n : 0;
        std::size_t best = start;
        for (std::size_t k = 0; k < n; ++k) {
            const std::size_t d = (start + k) % n;
            if (users[mine[d]] < users[mine[best]]) best = d;
        }
        ++users[mine[best]];
        out[r].device = static_cast<int>(best);
        out[r].id = mine[best];
    }
    for (DeviceAssignment& a : out) a.shared = !a.id.empty() && users[a.id] > 1;
    return out;
}

}  // namespace gridsim
