// Named ranges on the host timeline for profilers: NVTX ranges in the domain "gridsim", one
// around each phase the run report times, named as the report names it (interior, boundary,
// pack, transfer, unpack, reduction, vector, io), and around the output's writes and a recorded
// step's replay, so that an Nsight Systems timeline reads like the report. NVTX is header-only
// and costs an indirect call per range unless a profiler is attached; a build without it (no
// CUDA toolkit) marks nothing.
#pragma once

#if defined(GRIDSIM_NVTX)
#include <nvtx3/nvToolsExt.h>
#endif

namespace gridsim {

class TraceRange {
public:
    explicit TraceRange(const char* name) noexcept {
#if defined(GRIDSIM_NVTX)
        nvtxEventAttributes_t attr{};
        attr.version = NVTX_VERSION;
        attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
        attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
        attr.message.ascii = name;
        nvtxDomainRangePushEx(domain(), &attr);
#else
        (void)name;
#endif
    }
    TraceRange(const TraceRange&) = delete;
    TraceRange& operator=(const TraceRange&) = delete;
    ~TraceRange() {
#if defined(GRIDSIM_NVTX)
        nvtxDomainRangePop(domain());
#endif
    }

private:
#if defined(GRIDSIM_NVTX)
    static nvtxDomainHandle_t domain() {
        static const nvtxDomainHandle_t d = nvtxDomainCreateA("gridsim");
        return d;
    }
#endif
};

}  // namespace gridsim
