// The run's fields as the host sees them: a copy of the current field (checks, gathers), a
// staged copy of its owned points for the background writer, and the last state a check found
// good (output.dump_on_failure).
#pragma once

#include <memory>
#include <vector>

#include "engine/field_pair.hpp"
#include "mesh/domain.hpp"
#include "mesh/landing.hpp"
#include "parallel/cart_topology.hpp"

namespace gridsim {

template <class T>
class HostMirror {
public:
    HostMirror(Backend<T>& be, FieldPair<T>& fields, const CartTopology& topo, const Domain& dom)
        : be_(be), fields_(fields), topo_(topo), dom_(dom) {}

    // This rank's current field on the host (halos included; index with field extents).
    [[nodiscard]] FieldView<const T> current_on_host() {
        be_.download(fields_.current(), copy_);
        return {copy_.data(), fields_.extents()};
    }
    // The same, precision erased, for the output layer.
    [[nodiscard]] HostField current_host_field() {
        const FieldView<const T> v = current_on_host();
        return HostField{v.data, sizeof(T) == 4, v.ext};
    }
    // The current field's owned points, packed, on their way into `dst` (memory from
    // allocate_staging()): the copy runs beside the sweeps issued after it
    // (Backend::download_box), and the first work that would overwrite those points waits for it.
    [[nodiscard]] StagedField stage_current(void* dst);
    // Host memory for one field, page-locked on the CUDA backend (fast copies from the device).
    [[nodiscard]] std::shared_ptr<void> allocate_staging();
    // Keeps a copy of the current field, the state at `step`, in backend memory (one more field,
    // allocated at the first call).
    void keep_last_good(std::int64_t step);
    // That copy on the host, and the step it was kept at (-1: none kept).
    [[nodiscard]] HostField last_good_host_field() {
        be_.download(last_good_.view(), copy_);
        return HostField{copy_.data(), sizeof(T) == 4, last_good_.extents()};
    }
    [[nodiscard]] std::int64_t last_good_step() const { return last_good_step_; }
    // The global solved grid on rank 0 (empty elsewhere).
    [[nodiscard]] std::vector<double> gather();

private:
    Backend<T>& be_;
    FieldPair<T>& fields_;
    const CartTopology& topo_;
    const Domain& dom_;
    std::vector<T> copy_;
    Field<T> last_good_;
    std::int64_t last_good_step_ = -1;
};

}  // namespace gridsim
