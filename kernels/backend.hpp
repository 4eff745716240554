// The backend-neutral interface the solver drives (one implementation per backend, as in
// BabelStream's Stream.h). Every operation takes views and boxes, never owning types.
//
// Lanes: the overlap recipe (DESIGN.md section 5) runs the boundary shell and halo packing on
// one lane and the interior on another. The CUDA backend maps lanes to a high- and a
// low-priority stream ordered by events; the CPU backend executes everything immediately, so
// its lanes are trivially ordered.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "field/field.hpp"
#include "grid/box.hpp"
#include "kernels/stencil.hpp"

namespace gridsim {

enum class Lane { boundary, interior };

template <class T>
class Backend {
public:
    Backend() = default;
    Backend(const Backend&) = delete;
    Backend& operator=(const Backend&) = delete;
    virtual ~Backend() = default;

    [[nodiscard]] virtual std::string name() const = 0;

    // Memory the backend computes on (zero-filled).
    virtual Buffer<T> allocate(std::size_t elements) = 0;
    Field<T> allocate_field(const FieldExtents& ext) { return Field<T>(ext, allocate(ext.total)); }

    // Whole-field copies between host vectors and backend memory, halos included.
    virtual void upload(const std::vector<T>& host, FieldView<T> dst) = 0;
    virtual void download(FieldView<const T> src, std::vector<T>& host) = 0;

    // out(p) = stencil(in, p) for every p in `box`.
    virtual void apply(const StencilParams<T>& params, FieldView<const T> in, FieldView<T> out,
                       const Box& box, Lane lane) = 0;
    // Copies `box` of `u` to/from a contiguous buffer (x fastest) in backend memory.
    virtual void pack(FieldView<const T> u, const Box& box, T* dst, Lane lane) = 0;
    virtual void unpack(const T* src, FieldView<T> u, const Box& box, Lane lane) = 0;

    // Deterministic reductions over `box` (same order on every run), returned to the host:
    // sum of (a-b)^2, and sum of a^2. Complete all lanes' work first.
    virtual double sum_sq_diff(FieldView<const T> a, FieldView<const T> b, const Box& box) = 0;
    virtual double sum_sq(FieldView<const T> a, const Box& box) = 0;

    // Blocks the host until the lane's work so far is done.
    virtual void wait(Lane lane) = 0;
};

template <class T>
std::unique_ptr<Backend<T>> make_cpu_backend();

}  // namespace gridsim
