// parallel.bind decisions on synthetic machines (tests/topologies/*.xml, written by
// make_topologies.py): a pure function of topology, GPU bus id, the launcher's CPU set, the mode
// and, on the CPU backend, the rank's place on its node. Then, on this machine, that applying a
// decision leaves the process and a freshly allocated buffer where the decision said.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "parallel/binding.hpp"

namespace gridsim {
namespace {

Topology machine(const std::string& name) {
    return Topology::from_xml(std::string(GRIDSIM_TOPOLOGIES) + "/" + name + ".xml");
}

BindDecision gpu(const Topology& t, const std::string& bus, BindMode mode = BindMode::automatic,
                 const std::string& launcher = "") {
    BindRequest r;
    r.mode = mode;
    r.bus_id = bus;
    r.launcher_cpus = launcher;
    return decide_binding(t, r);
}

BindDecision cpu_rank(const Topology& t, int rank, int ranks, const std::string& launcher = "") {
    BindRequest r;
    r.launcher_cpus = launcher;
    r.local_rank = rank;
    r.local_ranks = ranks;
    return decide_binding(t, r);
}

void expect_bound(const BindDecision& d, const std::string& node, const std::string& cpus) {
    EXPECT_EQ(d.locality, node);
    EXPECT_EQ(d.mem_nodes, node);
    EXPECT_EQ(d.cpus, cpus);
    EXPECT_FALSE(d.warn);
    EXPECT_TRUE(d.error.empty()) << d.error;
    EXPECT_NE(d.note.find("bound to NUMA node " + node), std::string::npos) << d.note;
}

void expect_untouched(const BindDecision& d) {
    EXPECT_TRUE(d.cpus.empty()) << d.cpus;
    EXPECT_TRUE(d.mem_nodes.empty()) << d.mem_nodes;
}

TEST(Binding, TwoSocketsEachGpuGoesToItsSocket) {
    const Topology t = machine("two_sockets_four_gpus");
    EXPECT_EQ(t.numa_node_ids(), (std::vector<int>{0, 1}));
    EXPECT_EQ(t.all_cpus(), "0-15");
    expect_bound(gpu(t, "0000:01:00.0"), "0", "0-7");
    expect_bound(gpu(t, "0000:02:00.0"), "0", "0-7");
    expect_bound(gpu(t, "0000:81:00.0"), "1", "8-15");
    expect_bound(gpu(t, "0000:82:00.0", BindMode::strict), "1", "8-15");
}

TEST(Binding, EightGpusOnFourNumaNodes) {
    const Topology t = machine("eight_gpus_two_sockets");
    EXPECT_EQ(t.numa_node_ids(), (std::vector<int>{0, 1, 2, 3}));
    expect_bound(gpu(t, "0000:01:00.0"), "0", "0-7");
    expect_bound(gpu(t, "0000:42:00.0"), "1", "8-15");
    expect_bound(gpu(t, "0000:81:00.0"), "2", "16-23");
    expect_bound(gpu(t, "0000:c2:00.0", BindMode::numa), "3", "24-31");
}

TEST(Binding, GpusAllOnOneSocketAndMoreRanksThanGpus) {
    const Topology t = machine("gpus_on_one_socket");
    // Eight ranks sharing four GPUs: each goes where its GPU is, however many share it.
    for (const char* bus : {"0000:01:00.0", "0000:02:00.0", "0000:03:00.0", "0000:04:00.0"}) {
        expect_bound(gpu(t, bus), "0", "0-7");
        expect_bound(gpu(t, bus), "0", "0-7");
    }
}

TEST(Binding, UnknownLocalityIsANoteAWarningOrAnError) {
    const Topology t = machine("unknown_locality");
    const BindDecision a = gpu(t, "0000:18:00.0");
    expect_untouched(a);
    EXPECT_FALSE(a.warn);
    EXPECT_TRUE(a.error.empty());
    EXPECT_NE(a.note.find("NUMA node of GPU 0000:18:00.0 is unknown"), std::string::npos) << a.note;
    const BindDecision n = gpu(t, "0000:18:00.0", BindMode::numa);
    expect_untouched(n);
    EXPECT_TRUE(n.warn);
    const BindDecision s = gpu(t, "0000:3b:00.0", BindMode::strict);
    expect_untouched(s);
    EXPECT_NE(s.error.find("NUMA node of GPU 0000:3b:00.0 is unknown"), std::string::npos)
        << s.error;
}

TEST(Binding, NoPciInformation) {
    const Topology t = machine("no_pci");
    const BindDecision a = gpu(t, "0000:41:00.0");
    expect_untouched(a);
    EXPECT_NE(a.note.find("no PCI information for GPU 0000:41:00.0"), std::string::npos) << a.note;
    EXPECT_NE(gpu(t, "0000:41:00.0", BindMode::strict).error.find("no PCI information"),
              std::string::npos);
    // A bus id the machine does not have is the same case.
    EXPECT_NE(gpu(machine("two_sockets_four_gpus"), "0000:99:00.0", BindMode::strict)
                  .error.find("no PCI information for GPU 0000:99:00.0"),
              std::string::npos);
}

TEST(Binding, OneNumaNodeBindsMemoryThereAndKeepsTheLaunchersCpus) {
    const Topology t = machine("one_numa_node");
    EXPECT_EQ(t.numa_node_ids(), (std::vector<int>{0}));
    const BindDecision d = gpu(t, "0000:18:00.0", BindMode::strict, "2-3");
    expect_bound(d, "0", "2-3");
    EXPECT_NE(d.note.find("the only one"), std::string::npos) << d.note;
}

TEST(Binding, LauncherCpusAreNeverWidened) {
    const Topology t = machine("two_sockets_four_gpus");
    // The launcher gave CPUs on both sides: only those next to the GPU are kept.
    expect_bound(gpu(t, "0000:81:00.0", BindMode::automatic, "6-9"), "1", "8-9");
    // The launcher's CPUs exclude the GPU's node: memory goes to the GPU, CPUs stay.
    const BindDecision a = gpu(t, "0000:81:00.0", BindMode::automatic, "0-3");
    EXPECT_TRUE(a.cpus.empty());
    EXPECT_EQ(a.mem_nodes, "1");
    EXPECT_FALSE(a.warn);
    EXPECT_NE(a.note.find("the launcher's CPUs 0-3 exclude NUMA node 1"), std::string::npos)
        << a.note;
    EXPECT_TRUE(gpu(t, "0000:81:00.0", BindMode::numa, "0-3").warn);
    const BindDecision s = gpu(t, "0000:81:00.0", BindMode::strict, "0-3");
    EXPECT_NE(s.error.find("exclude NUMA node 1"), std::string::npos) << s.error;
}

TEST(Binding, NoneTouchesNothing) {
    const Topology t = machine("two_sockets_four_gpus");
    const BindDecision d = gpu(t, "0000:81:00.0", BindMode::none);
    expect_untouched(d);
    EXPECT_TRUE(d.locality.empty());
    EXPECT_NE(d.note.find("none"), std::string::npos);
}

TEST(Binding, CpuRanksAreSpreadOverTheNumaNodesTheyMayUse) {
    const Topology t = machine("eight_gpus_two_sockets");
    expect_bound(cpu_rank(t, 0, 2), "0", "0-7");
    expect_bound(cpu_rank(t, 1, 2), "2", "16-23");
    const char* nodes8[] = {"0", "0", "1", "1", "2", "2", "3", "3"};
    for (int r = 0; r < 8; ++r) EXPECT_EQ(cpu_rank(t, r, 8).locality, nodes8[r]) << r;
    // A launcher that bound the ranks to the second socket: spread within it.
    expect_bound(cpu_rank(t, 0, 2, "16-31"), "2", "16-23");
    expect_bound(cpu_rank(t, 1, 2, "16-31"), "3", "24-31");
    // One core: its own node only.
    expect_bound(cpu_rank(t, 3, 4, "9"), "1", "9");
}

TEST(Binding, ListsHoldTheirMembers) {
    EXPECT_TRUE(list_contains("0-3,8", 0));
    EXPECT_TRUE(list_contains("0-3,8", 3));
    EXPECT_TRUE(list_contains("0-3,8", 8));
    EXPECT_FALSE(list_contains("0-3,8", 5));
    EXPECT_FALSE(list_contains("1", 0));
}

TEST(Binding, AMissingTopologyFileIsAnError) {
    EXPECT_THROW(machine("no_such_machine"), std::runtime_error);
}

// This machine: after applying the decision, the process's CPU set, its memory policy and the
// pages of a buffer allocated and touched afterwards are what the decision said.
TEST(BindingOnThisMachine, AppliedBindingIsWhatTheDecisionSaid) {
    const Topology t = Topology::system();
    BindRequest r;
    r.mode = BindMode::numa;
    r.launcher_cpus = bound_state(t).cpus;
    const BindDecision d = decide_binding(t, r);
    ASSERT_TRUE(d.error.empty()) << d.error;
    ASSERT_FALSE(d.mem_nodes.empty()) << d.note;  // a CPU rank's node is always known
    apply_binding(t, d);
    const BoundState now = bound_state(t);
    EXPECT_EQ(now.cpus, d.cpus.empty() ? r.launcher_cpus : d.cpus);
    EXPECT_EQ(now.policy, "bind");
    EXPECT_EQ(now.mem_nodes, d.mem_nodes);
    const std::size_t bytes = std::size_t{16} << 20;
    std::unique_ptr<void, decltype(&std::free)> buf(std::aligned_alloc(4096, bytes), &std::free);
    ASSERT_NE(buf.get(), nullptr);
    std::memset(buf.get(), 1, bytes);
    EXPECT_EQ(pages_numa_nodes(t, buf.get(), bytes), d.mem_nodes);
}

}  // namespace
}  // namespace gridsim
