// The batch job a run records, from made-up scheduler environments: each scheduler's variables,
// array tasks, and the order in which they are asked.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "platform/batch_job.hpp"

using namespace gridsim;

namespace {

BatchJob job_in(const std::map<std::string, std::string>& env) {
    return batch_job_from([&](const char* name) -> const char* {
        const auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
    });
}

void expect_job(const BatchJob& j, const std::string& scheduler, const std::string& id,
                const std::string& step) {
    EXPECT_EQ(j.scheduler, scheduler);
    EXPECT_EQ(j.id, id);
    EXPECT_EQ(j.step, step);
}

}  // namespace

TEST(BatchJob, EachScheduler) {
    expect_job(job_in({{"SLURM_JOB_ID", "812"}, {"SLURM_STEP_ID", "1"}}), "slurm", "812", "1");
    expect_job(job_in({{"PBS_JOBID", "12.pbs"}}), "pbs", "12.pbs", "");
    expect_job(job_in({{"LSB_JOBID", "77"}}), "lsf", "77", "");
    expect_job(job_in({{"FLUX_JOB_ID", "f3Kx"}}), "flux", "f3Kx", "");
    expect_job(job_in({}), "", "", "");
}

TEST(BatchJob, ArrayTasksNameJobAndTask) {
    expect_job(job_in({{"SLURM_JOB_ID", "900"},
                       {"SLURM_ARRAY_JOB_ID", "880"},
                       {"SLURM_ARRAY_TASK_ID", "20"},
                       {"SLURM_STEP_ID", "0"}}),
               "slurm", "880_20", "0");
    expect_job(job_in({{"LSB_JOBID", "5"}, {"LSB_JOBINDEX", "3"}}), "lsf", "5_3", "");
    expect_job(job_in({{"LSB_JOBID", "5"}, {"LSB_JOBINDEX", "0"}}), "lsf", "5", "");  // no array
}

TEST(BatchJob, SlurmFirstThenPbsLsfFlux) {
    expect_job(job_in({{"FLUX_JOB_ID", "f1"}, {"SLURM_JOB_ID", "2"}}), "slurm", "2", "");
    expect_job(job_in({{"FLUX_JOB_ID", "f1"}, {"PBS_JOBID", "3"}}), "pbs", "3", "");
    expect_job(job_in({{"FLUX_JOB_ID", "f1"}, {"LSB_JOBID", "4"}}), "lsf", "4", "");
    expect_job(job_in({{"SLURM_JOB_ID", ""}, {"FLUX_JOB_ID", "f1"}}), "flux", "f1", "");
}
