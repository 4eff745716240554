#include "platform/batch_job.hpp"

#include <cstdlib>

namespace gridsim {

namespace {

std::string value(const std::function<const char*(const char*)>& lookup, const char* name) {
    const char* v = lookup(name);
    return v != nullptr ? std::string(v) : std::string();
}

// "job_task" for a task of an array job, else the job's own id.
std::string with_task(const std::string& job, const std::string& task) {
    return task.empty() ? job : job + "_" + task;
}

}  // namespace

BatchJob batch_job_from(const std::function<const char*(const char*)>& lookup) {
    BatchJob j;
    if (const std::string id = value(lookup, "SLURM_JOB_ID"); !id.empty()) {
        const std::string array = value(lookup, "SLURM_ARRAY_JOB_ID");
        j = {"slurm", array.empty() ? id : with_task(array, value(lookup, "SLURM_ARRAY_TASK_ID")),
             value(lookup, "SLURM_STEP_ID")};
    } else if (const std::string pbs = value(lookup, "PBS_JOBID"); !pbs.empty()) {
        j = {"pbs", pbs, ""};
    } else if (const std::string lsf = value(lookup, "LSB_JOBID"); !lsf.empty()) {
        const std::string index = value(lookup, "LSB_JOBINDEX");
        j = {"lsf", with_task(lsf, index == "0" ? std::string() : index), ""};
    } else if (const std::string flux = value(lookup, "FLUX_JOB_ID"); !flux.empty()) {
        j = {"flux", flux, ""};
    }
    return j;
}

BatchJob batch_job() {
    return batch_job_from([](const char* name) { return std::getenv(name); });
}

}  // namespace gridsim
