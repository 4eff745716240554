// The batch job a process runs in, from its scheduler's environment, so that every report and
// file says which job made it. Slurm: SLURM_JOB_ID, SLURM_STEP_ID (and SLURM_ARRAY_JOB_ID with
// SLURM_ARRAY_TASK_ID for an array task); PBS: PBS_JOBID; LSF: LSB_JOBID
// (LSB_JOBINDEX); Flux: FLUX_JOB_ID. The first scheduler whose job id is set wins.
#pragma once

#include <functional>
#include <string>

namespace gridsim {

struct BatchJob {
    std::string scheduler;  // "slurm", "pbs", "lsf", "flux"; "" outside a batch job
    std::string id;         // the job's id (an array task: "job_task")
    std::string step;       // the job step (Slurm), or ""
};

// From `lookup` (an environment: the variable's value, or nullptr where unset).
BatchJob batch_job_from(const std::function<const char*(const char*)>& lookup);
// From this process's environment.
BatchJob batch_job();

}  // namespace gridsim
