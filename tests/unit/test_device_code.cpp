// Whether a build's CUDA architectures hold code for a GPU, from the rules of CUDA's binary
// compatibility (machine code within a major version upwards, PTX for every newer GPU), and the
// one line a run ends with where they do not.
#include <gtest/gtest.h>

#include "kernels/device_code.hpp"

using namespace gridsim;

TEST(DeviceCode, DefaultListRunsOnA100H100AndNewerThroughPtx) {
    const std::string list = "80-real,90-real,90-virtual";
    EXPECT_TRUE(has_device_code(list, 8, 0));  // A100
    EXPECT_TRUE(has_device_code(list, 8, 6));  // sm_80 code runs on 8.6 and 8.9
    EXPECT_TRUE(has_device_code(list, 8, 9));
    EXPECT_TRUE(has_device_code(list, 9, 0));   // H100, H200
    EXPECT_TRUE(has_device_code(list, 10, 0));  // B200: the driver compiles the 90 PTX
    EXPECT_TRUE(has_device_code(list, 12, 0));
    EXPECT_FALSE(has_device_code(list, 7, 0));  // V100: older than every entry
    EXPECT_FALSE(has_device_code(list, 7, 5));
}

TEST(DeviceCode, MachineCodeAloneStaysWithinItsMajorVersion) {
    EXPECT_FALSE(has_device_code("80-real", 9, 0));  // an A100 build on an H200
    EXPECT_TRUE(has_device_code("80-real", 8, 7));
    EXPECT_FALSE(has_device_code("86-real", 8, 0));  // never downwards
    EXPECT_FALSE(has_device_code("90-real", 10, 0));
}

TEST(DeviceCode, PlainEntriesCarryBothKindsAndCMakeSeparatorsWork) {
    EXPECT_TRUE(has_device_code("80", 9, 0));  // "80" is sm_80 and compute_80
    EXPECT_TRUE(has_device_code("70-real;80", 12, 0));
    EXPECT_TRUE(has_device_code("90-virtual", 9, 0));
    EXPECT_FALSE(has_device_code("90-virtual", 8, 9));
}

TEST(DeviceCode, ArchitectureSpecificCodeRunsOnItsOwnGpuOnly) {
    EXPECT_TRUE(has_device_code("90a-real", 9, 0));
    EXPECT_FALSE(has_device_code("90a-real", 10, 0));
    EXPECT_FALSE(has_device_code("90a", 10, 0));
}

TEST(DeviceCode, NothingOrGarbageHoldsNoCode) {
    EXPECT_FALSE(has_device_code("", 9, 0));
    EXPECT_FALSE(has_device_code("native", 9, 0));
    EXPECT_FALSE(has_device_code("sm_90", 9, 0));
    EXPECT_FALSE(has_device_code("90-both", 9, 0));
}

TEST(DeviceCode, TheMissingLineNamesGpuCapabilityBuildAndOption) {
    EXPECT_EQ(missing_device_code("80-real,90", 0, "NVIDIA H200", 9, 0), "");
    const std::string line = missing_device_code("80-real", 1, "NVIDIA H200", 9, 0);
    EXPECT_NE(line.find("GPU 1 (NVIDIA H200, compute capability 9.0)"), std::string::npos) << line;
    EXPECT_NE(line.find("architectures 80-real"), std::string::npos) << line;
    EXPECT_NE(line.find("-DCMAKE_CUDA_ARCHITECTURES=90"), std::string::npos) << line;
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
}
