// Device assignment from synthetic device lists, one per launcher layout: whether ranks share a
// GPU follows from the devices' identities, never from counts.
#include <gtest/gtest.h>

#include "platform/device_map.hpp"
#include "platform/resource_checks.hpp"

using namespace gridsim;

namespace {

using Lists = std::vector<std::vector<std::string>>;

const std::string kA = "0000:19:00.0";
const std::string kB = "0000:3B:00.0";
const std::string kC = "0000:5D:00.0";
const std::string kD = "0000:DB:00.0";

std::vector<std::string> ids(const std::vector<DeviceAssignment>& a) {
    std::vector<std::string> out;
    for (const auto& x : a) out.push_back(x.id);
    return out;
}

bool any_shared(const std::vector<DeviceAssignment>& a) {
    for (const auto& x : a)
        if (x.shared) return true;
    return false;
}

}  // namespace

TEST(DeviceMap, AllGpusVisibleToAllRanksGivesRankRDeviceR) {
    const auto a = assign_devices(Lists(4, {kA, kB, kC, kD}));
    EXPECT_EQ(ids(a), (std::vector<std::string>{kA, kB, kC, kD}));
    for (int r = 0; r < 4; ++r) EXPECT_EQ(a[r].device, r);
    EXPECT_FALSE(any_shared(a));
}

// Slurm --gpus-per-task=1 / a per-rank CUDA_VISIBLE_DEVICES: every rank sees one device, its
// own, as device 0. Counting (4 ranks, 1 visible each) would call this sharing; it is not.
TEST(DeviceMap, OneGpuPerRankIsNotSharing) {
    const auto a = assign_devices({{kA}, {kB}, {kC}, {kD}});
    EXPECT_EQ(ids(a), (std::vector<std::string>{kA, kB, kC, kD}));
    for (const auto& x : a) EXPECT_EQ(x.device, 0);
    EXPECT_FALSE(any_shared(a));
}

TEST(DeviceMap, TwoGpusPerRankTakesTheFirstOfEach) {
    const auto a = assign_devices({{kA, kB}, {kC, kD}});
    EXPECT_EQ(ids(a), (std::vector<std::string>{kA, kC}));
    EXPECT_FALSE(any_shared(a));
}

TEST(DeviceMap, FewerGpusThanRanksShareRoundRobin) {
    const auto a = assign_devices(Lists(4, {kA, kB}));
    EXPECT_EQ(ids(a), (std::vector<std::string>{kA, kB, kA, kB}));
    for (const auto& x : a) EXPECT_TRUE(x.shared);
}

// Two ranks bound to the same single GPU (a launcher that gave both the same device).
TEST(DeviceMap, TheSameGpuGivenToTwoRanksIsShared) {
    const auto a = assign_devices({{kA}, {kA}, {kB}});
    EXPECT_TRUE(a[0].shared);
    EXPECT_TRUE(a[1].shared);
    EXPECT_FALSE(a[2].shared);
}

TEST(DeviceMap, ARankWithNoneGetsNone) {
    const auto a = assign_devices({{kA}, {}, {kB}});
    EXPECT_EQ(a[1].device, -1);
    EXPECT_EQ(a[1].id, "");
    EXPECT_FALSE(a[1].shared);
    EXPECT_EQ(ids(a), (std::vector<std::string>{kA, "", kB}));
}

// CUDA_VISIBLE_DEVICES given as UUIDs, with the two ranks' lists in different orders: identities
// are compared as they are, and each rank takes a device no one else has.
TEST(DeviceMap, UuidListsInAnyOrder) {
    const std::string u1 = "GPU-32d1b616-6f18-86ac-9262-46af623b47c9";
    const std::string u2 = "GPU-69812685-5467-5349-b3ae-166984a8b3db";
    const auto a = assign_devices({{u1, u2}, {u1, u2}});
    EXPECT_EQ(ids(a), (std::vector<std::string>{u1, u2}));
    const auto b = assign_devices({{u2}, {u1, u2}});
    EXPECT_EQ(ids(b), (std::vector<std::string>{u2, u1}));
    EXPECT_EQ(b[1].device, 0);
    EXPECT_FALSE(any_shared(b));
}

// The run header's device count: physical GPUs by node and bus id, each named once however many
// ranks drive it (then the ranks too); CPU ranks count one each.
TEST(DevicesText, CountsPhysicalGpusAndSaysWhereRanksShareThem) {
    const std::string h200 = "NVIDIA H200";
    EXPECT_EQ(devices_text({{"cpu", ""}, {"cpu", ""}}), "2 x cpu");
    EXPECT_EQ(devices_text(
                  {{h200, "n1 " + kA}, {h200, "n1 " + kB}, {h200, "n1 " + kC}, {h200, "n1 " + kD}}),
              "4 x NVIDIA H200");
    EXPECT_EQ(devices_text({{h200, "n1 " + kA}, {h200, "n1 " + kA}}), "1 x NVIDIA H200 (2 ranks)");
    // The same bus id on two nodes is two GPUs.
    EXPECT_EQ(devices_text({{h200, "n1 " + kA}, {h200, "n2 " + kA}}), "2 x NVIDIA H200");
    EXPECT_EQ(devices_text({{h200, "n1 " + kA},
                            {h200, "n1 " + kB},
                            {h200, "n1 " + kA},
                            {"NVIDIA H100", "n2 " + kA}}),
              "1 x NVIDIA H100, 2 x NVIDIA H200 (3 ranks)");
}
