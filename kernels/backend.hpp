// The backend-neutral interface the solver drives (one implementation per backend, as in
// BabelStream's Stream.h). Every operation takes views and boxes, never owning types.
//
// Lanes: the overlap recipe (docs/architecture.md, "One step") runs the boundary shell, packing and
// halo transfers on one lane and the interior on another. The CUDA backend maps lanes to a high-
// and a low-priority stream, ordered only through events (join_lanes); the CPU backend executes
// every call immediately on the calling thread, so its lanes are trivially ordered.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/halo_arrivals.hpp"
#include "kernels/initial.hpp"
#include "kernels/multigrid.hpp"
#include "kernels/stencil.hpp"
#include "kernels/vector_ops.hpp"
#include "mesh/box.hpp"
#include "mesh/field.hpp"
#include "mesh/landing.hpp"

namespace gridsim {

enum class Lane { boundary, interior };

// Up to six faces of a field moved in one pass (one launch on the CUDA backend: at small
// subdomains a step's cost is its launches, not its bytes). Entry f is the points of box[f]
// (x fastest) and either a contiguous buffer buf[f] (pack, unpack), or, for a face whose
// neighbour is the rank itself (a periodic axis held by one rank), the points shift[f] away in
// the same field (wrap), or, for halo points beyond a fixed face, their mirror images through the
// plane shift[f][axis[f]] of axis axis[f] (reflect). Plain data, passed by value to the device.
template <class T>
struct FaceMoves {
    static constexpr int kMaxFaces = 6;
    int count = 0;
    std::array<Box, kMaxFaces> box{};
    std::array<T*, kMaxFaces> buf{};
    std::array<std::array<int, 3>, kMaxFaces> shift{};
    std::array<int, kMaxFaces> axis{};

    void add(const Box& b, T* buffer, const std::array<int, 3>& s = {0, 0, 0}) {
        box[count] = b;
        buf[count] = buffer;
        shift[count] = s;
        ++count;
    }
    void add_mirror(const Box& b, int mirror_axis, int plane) {
        std::array<int, 3> s{0, 0, 0};
        s[mirror_axis] = plane;
        add(b, nullptr, s);
        axis[count - 1] = mirror_axis;
    }
    // Point (i, j, k) of entry f's box from its mirror image (reflect): u(p) = 2 u(q) - u(2q - p),
    // q the point of the plane on p's line along the axis. Every backend's reflect calls it.
    GRIDSIM_HD void reflect_point(FieldView<T> u, int f, int i, int j, int k) const {
        const int d = axis[f];
        const int along = d == 0 ? i : d == 1 ? j : k;
        const std::int64_t step = (shift[f][d] - along) * (d == 0   ? 1
                                                           : d == 1 ? u.ext.sy
                                                                    : u.ext.sz);
        const std::int64_t at = u.ext.index(i, j, k);
        u.data[at] = T(2) * u.data[at + step] - u.data[at + 2 * step];
    }
    [[nodiscard]] bool empty() const { return count == 0; }
};

// Deterministic statistics of a field over a box.
struct FieldStats {
    double min = 0.0;
    double max = 0.0;
    double sum = 0.0;
    std::int64_t nonfinite = 0;  // NaN or Inf points (excluded from min/max/sum)
};

// Measures intervals of work on a lane in the lane's own time (wall clock on the CPU, CUDA
// events on a stream), accumulated per slot. Intervals are closed in the order opened.
class IntervalTimer {
public:
    IntervalTimer() = default;
    IntervalTimer(const IntervalTimer&) = delete;
    IntervalTimer& operator=(const IntervalTimer&) = delete;
    virtual ~IntervalTimer() = default;
    virtual void begin(int slot, Lane lane) = 0;
    virtual void end(int slot, Lane lane) = 0;
    // Adds every finished interval's seconds to seconds[slot]; `block` waits for unfinished ones.
    virtual void collect(std::vector<double>& seconds, bool block) = 0;
};

// Work a backend recorded (Recorder::end_capture), replayed on the boundary lane after the work
// issued there so far and before any issued later.
class Recording {
public:
    Recording() = default;
    Recording(const Recording&) = delete;
    Recording& operator=(const Recording&) = delete;
    virtual ~Recording() = default;
    // The most sums one recording reads back: a group of residual sweeps, one sum each.
    static constexpr int kMostReads = 4;
    // Replays the work; returns the id of its first read (FoldedSums::finish_read), or -1. A
    // recording of several residual sweeps reads one sum each, ids in order from the first.
    virtual int launch() = 0;
};

// The sums a backend folds in a fixed order (jacobi's residual, the CG's p . A p) and their reads
// back to the host. Every backend has them (Backend::sums()).
class FoldedSums {
public:
    FoldedSums() = default;
    FoldedSums(const FoldedSums&) = delete;
    FoldedSums& operator=(const FoldedSums&) = delete;
    virtual ~FoldedSums() = default;

    // Adds every partial written since the last call in a fixed order (the same inputs give the
    // same bits) into one double in backend memory, after the work of both lanes so far but
    // without making either lane wait (the CUDA backend folds on a stream of its own); returns
    // its address (overwritten by the next call but one).
    virtual double* fold_residual() = 0;
    // Makes `lane`'s later work wait for the last fold, and so for every earlier one (before a
    // collective on that lane uses a result).
    virtual void join_fold(Lane lane) = 0;
    // Folds the partials as fold_residual() does and copies the folded sum to the host without
    // waiting (a backend may do both in one launch); returns the read's id. finish_read(id)
    // waits for that read and returns its value. At most kReads reads are unfinished at a time.
    static constexpr int kReads = 8;
    virtual int fold_and_read() = 0;
    virtual double finish_read(int id) = 0;
};

// Deterministic reductions over a box, returned to the host (they wait for both lanes): the same
// inputs give the same bits on every run. Every backend has them (Backend::reductions()).
template <class T>
class FieldReductions {
public:
    FieldReductions() = default;
    FieldReductions(const FieldReductions&) = delete;
    FieldReductions& operator=(const FieldReductions&) = delete;
    virtual ~FieldReductions() = default;

    virtual double sum_sq_diff(FieldView<const T> a, FieldView<const T> b, const Box& box) = 0;
    virtual double sum_sq(FieldView<const T> a, const Box& box) = 0;
    virtual FieldStats stats(FieldView<const T> a, const Box& box) = 0;
};

// The CG solver's vector operations (problems/cg.hpp), on the boundary lane. Every backend has
// them (Backend::vector_ops()). A sum lands in `sum`, one of the sum_slots() (this rank's part),
// and is not waited for, so that a device all-reduce (NCCL) can follow it on the lane before the
// host reads it (read_sums).
template <class T>
class VectorOps {
public:
    VectorOps() = default;
    VectorOps(const VectorOps&) = delete;
    VectorOps& operator=(const VectorOps&) = delete;
    virtual ~VectorOps() = default;

    // Pays the vector operations' one-time costs (a BLAS library's handle, its kernels loaded)
    // now, at a solver's start-up, so that none lands in its first step; waits for it.
    virtual void prepare() = 0;
    // The BLAS sequence (parallel.cg_kernels = "cublas"; the CUDA backend calls cuBLAS): over
    // the whole allocation of equally shaped fields, halos and row padding included; the solver
    // keeps those entries zero wherever a sum must be exact.
    virtual void axpy(T a, FieldView<const T> x, FieldView<T> y) = 0;               // y += a x
    virtual void scale(T a, FieldView<T> x) = 0;                                    // x *= a
    virtual void dot(FieldView<const T> x, FieldView<const T> y, double* sum) = 0;  // sum x y
    // The fused passes (parallel.cg_kernels = "fused"; kernels/vector_ops.hpp): one pass over
    // `box` each, sums in double in a fixed order (p.q comes from apply's product sum).
    virtual void cg_update(const CgUpdate<T>& s, const Box& box, double* sum) = 0;  // sum r z
    virtual void xpay(FieldView<const T> z, T b, FieldView<T> p, const Box& box) = 0;
    // One pass of the Chebyshev preconditioner over `box` (kernels/vector_ops.hpp).
    virtual void chebyshev_step(const ChebyshevStep<T>& s, const Box& box) = 0;
    // The multigrid preconditioner's passes (kernels/multigrid.hpp): restriction over the coarse
    // `box`, prolongation added over the fine `box`, and a in + b A(in) + c add over `box`.
    virtual void restrict_to(const GridTransfer<T>& t, const Box& box) = 0;
    virtual void prolong_add(const GridTransfer<T>& t, const Box& box) = 0;
    virtual void combine(const StencilCombination<T>& s, const Box& box) = 0;
    // kSumSlots doubles in backend memory for those sums.
    static constexpr int kSumSlots = 4;
    virtual double* sum_slots() = 0;
    // Copies `n` doubles of backend memory (sum slots, or a fold's result once the boundary lane
    // has joined it) to `host` after the boundary lane's work so far, and waits.
    virtual void read_sums(const double* src, int n, double* host) = 0;
};

// A capability (Backend::box_sweeps(), nullptr where absent: then one apply() per box): one
// sweep's boxes (disjoint) in as few launches as the backend can, their points and the partials
// of `sum` as apply() on each box in turn would give them, so the fold gives the same bits.
// `wrap_period` > 0: the walk axis (y in 2D, z in 3D) is periodic and held by this rank alone,
// its halo one layer deep: the sweep also stores every updated point of the first owned layer
// one period on and of the last one period back, which is what that axis's halo exchange would
// copy for the next sweep (it then needs none).
template <class T>
class BoxSweeps {
public:
    BoxSweeps() = default;
    BoxSweeps(const BoxSweeps&) = delete;
    BoxSweeps& operator=(const BoxSweeps&) = delete;
    virtual ~BoxSweeps() = default;

    virtual void apply_boxes(const StencilParams<T>& params, FieldView<const T> in,
                             FieldView<T> out, const std::vector<Box>& boxes, Lane lane,
                             StencilSum sum, int wrap_period) = 0;
};

// A capability of a TimeBlocking (faces_first(dims, kind), nullptr where absent): apply_levels on
// `lane`, the work that writes any point of `faces` (boxes a halo exchange reads) done first;
// then wait_for_faces(other) makes the other lane's later work wait only until those points are
// written, so that the exchange issued there runs beside the rest of the pass (a faces-first
// pass). Every such pass is waited for once, before the next one.
template <class T>
class FacesFirstPasses {
public:
    FacesFirstPasses() = default;
    FacesFirstPasses(const FacesFirstPasses&) = delete;
    FacesFirstPasses& operator=(const FacesFirstPasses&) = delete;
    virtual ~FacesFirstPasses() = default;
    virtual void apply_levels_faces_first(const StencilParams<T>& params, FieldView<const T> in,
                                          FieldView<T> out, const Box& box, const Box& live,
                                          int levels, const std::vector<Box>& faces, Lane lane) = 0;
    virtual void wait_for_faces(Lane lane) = 0;
};

// A capability of a TimeBlocking (pipelined(dims, kind), nullptr where absent): apply_levels on the
// interior lane as pass `arrivals.pass` of a pipeline (a pipelined pass), while the halo exchange
// of the pass before may still be moving on the boundary lane: each block whose input reaches a
// halo of `arrivals` walks towards it and waits inside the pass for it to land
// (halo_arrivals.hpp). With `goes_on`, the interior lane first waits for the boundary lane's work
// as it stood when the pipeline's previous pass was issued (every exchange but that pass's own);
// else the caller has joined the lanes. The boundary lane's later work waits for this pass.
template <class T>
class PipelinedPasses {
public:
    PipelinedPasses() = default;
    PipelinedPasses(const PipelinedPasses&) = delete;
    PipelinedPasses& operator=(const PipelinedPasses&) = delete;
    virtual ~PipelinedPasses() = default;
    virtual void apply_levels_pipelined(const StencilParams<T>& params, FieldView<const T> in,
                                        FieldView<T> out, const Box& box, const Box& live,
                                        int levels, const HaloArrivals& arrivals, bool goes_on) = 0;
};

// A capability (Backend::time_blocking(), nullptr where a pass is one sweep): out = `levels`
// sweeps of the stencil from `in` at every point of `box` in one pass. `in` must hold current
// values up to `levels` x the stencil's radius points around `box`; points outside `live` (the
// global Dirichlet points and the layers beyond them) keep in's value at every level, but for
// `reflections` (a star wider than one point: HaloExchange::reflections, else empty), which
// every level but the last takes as Backend::reflect does after a sweep (the caller reflects
// the last level's, as after a sweep). Each point of each level is stencil_point of the same
// values as in apply(), so `out` is bitwise that of `levels` sweeps. No sums.
// max_levels(dims, kind): the most levels one pass of that stencil takes (1: it takes none of
// several); levels_on_chip(dims, kind): how many of them one pass over memory advances, the
// levels between kept on chip (the CPU's passes go level by level: 1).
template <class T>
class TimeBlocking {
public:
    TimeBlocking() = default;
    TimeBlocking(const TimeBlocking&) = delete;
    TimeBlocking& operator=(const TimeBlocking&) = delete;
    virtual ~TimeBlocking() = default;

    [[nodiscard]] virtual int max_levels(int dims, StencilKind kind) const = 0;
    [[nodiscard]] virtual int levels_on_chip(int dims, StencilKind kind) const = 0;
    virtual void apply_levels(const StencilParams<T>& params, FieldView<const T> in,
                              FieldView<T> out, const Box& box, const Box& live, int levels,
                              const FaceMoves<T>& reflections, Lane lane) = 0;
    // Capabilities, nullptr where absent for `kind` in `dims` dimensions.
    [[nodiscard]] virtual FacesFirstPasses<T>* faces_first(int /*dims*/, StencilKind /*kind*/) {
        return nullptr;
    }
    [[nodiscard]] virtual PipelinedPasses<T>* pipelined(int /*dims*/, StencilKind /*kind*/) {
        return nullptr;
    }
};

// A capability (Backend::level_sums(), nullptr where absent): a residual every sweep inside a
// pass. A summing pass starts with start_summing_pass(sum_boxes, levels): the boxes a sweep sums
// over, in the order it sums them. Then apply_levels_summing, once over a box that holds every
// sum box or once per box of a split (the shell's boxes, then the interior, on their lanes), is
// apply_levels of a jacobi stencil that also sums each level's squared change over the sum boxes
// inside its box, exactly as that level's own sweep would, partial for partial:
// fold_and_read_levels then gives every level's sum bitwise as that sweep's fold would. Only
// where sums_levels(sum_boxes, dims), and only with boxes that split no sum box; 1 to 8 levels,
// in one pass over memory up to the backend's levels on chip (levels_per_memory_pass), the rest
// level by level.
template <class T>
class LevelSums {
public:
    LevelSums() = default;
    LevelSums(const LevelSums&) = delete;
    LevelSums& operator=(const LevelSums&) = delete;
    virtual ~LevelSums() = default;

    [[nodiscard]] virtual bool sums_levels(const std::vector<Box>& sum_boxes, int dims) const = 0;
    virtual void start_summing_pass(const std::vector<Box>& sum_boxes, int levels) = 0;
    virtual void apply_levels_summing(const StencilParams<T>& params, FieldView<const T> in,
                                      FieldView<T> out, const Box& box, const Box& live, int levels,
                                      Lane lane) = 0;
    // Folds each level's partials (as fold_residual() folds a sweep's) and starts reading the
    // `levels` sums back, without waiting; returns the read's id. finish_read_level(id, l) waits
    // for it and returns level l's sum (l = 0: the first sweep).
    virtual int fold_and_read_levels(int levels) = 0;
    virtual double finish_read_level(int id, int level) = 0;
};

// A capability (Backend::recorder(), nullptr where absent): work recorded once and replayed
// (CUDA graphs): at small subdomains issuing a step's launches, copies and events costs more
// host time than the GPU spends on them; a replay is one call. Between begin_capture() and
// end_capture() the work of both lanes is recorded, not run: no call may wait for the device,
// and a fold (fold_residual) runs on the boundary lane into memory the recording owns, as do the
// reads started then, at most Recording::kMostReads (fold_and_read's id is then -1: launch()
// returns the id of each replay's first read).
// `sum_read_by_host`: a residual recorded now ends in fold_and_read() (nothing on the device uses
// its sum), so the backend may leave the fold to finish_read(). The backend must not be used
// from another thread meanwhile.
class Recorder {
public:
    Recorder() = default;
    Recorder(const Recorder&) = delete;
    Recorder& operator=(const Recorder&) = delete;
    virtual ~Recorder() = default;

    virtual void begin_capture(bool sum_read_by_host) = 0;
    virtual std::unique_ptr<Recording> end_capture() = 0;
};

// The core interface: memory, transfers, the stencil, halo moves, lanes and the machine. The
// parts every backend has (sums, reductions, vector operations) and the capabilities some have
// (box sweeps, time blocking, level sums, recording) are separate interfaces that an
// implementation hands over once, at construction (set_parts).
template <class T>
class Backend {
public:
    static constexpr int kReads = FoldedSums::kReads;
    static constexpr int kSumSlots = VectorOps<T>::kSumSlots;

    Backend() = default;
    Backend(const Backend&) = delete;
    Backend& operator=(const Backend&) = delete;
    virtual ~Backend() = default;

    [[nodiscard]] virtual std::string name() const = 0;
    // What the sweeps of stencil `kind` in `dims` dimensions launch (kernel, block shape), for
    // the report.
    [[nodiscard]] virtual std::string launch_description(StencilKind kind, int dims) const = 0;
    [[nodiscard]] virtual bool on_device() const = 0;
    // The lane's CUDA stream (as void*) for libraries that take one (NCCL); nullptr on the CPU.
    [[nodiscard]] virtual void* native_stream(Lane lane) const = 0;
    // Elements each field row is aligned to (FieldExtents::make's `align`).
    [[nodiscard]] virtual int row_alignment() const = 0;

    // Memory the backend computes on (zero-filled), and host memory for staging transfers
    // (page-locked on the CUDA backend).
    virtual Buffer<T> allocate(std::size_t elements) = 0;
    virtual Buffer<T> allocate_host(std::size_t elements) = 0;
    Field<T> allocate_field(const FieldExtents& ext) { return Field<T>(ext, allocate(ext.total)); }

    // u(i, j, k) = initial_value(p, origin + (i, j, k)) at every owned point, computed where the
    // field lives (halos untouched), ordered on the boundary lane.
    virtual void fill_initial(const InitialParams& p, FieldView<T> u,
                              const std::array<int, 3>& origin) = 0;
    // Whole-field copies between host vectors and backend memory, halos included (blocking).
    virtual void upload(const std::vector<T>& host, FieldView<T> dst) = 0;
    virtual void download(FieldView<const T> src, std::vector<T>& host) = 0;
    // Asynchronous copy of n elements in any direction, ordered on `lane`.
    virtual void copy(T* dst, const T* src, std::size_t n, Lane lane) = 0;
    // The points of `box` of `src`, packed (x fastest, then y, then z), into host memory `dst`
    // (from allocate_host): after both lanes' work so far, on a lane of the backend's own,
    // neither lane nor the host waiting for it; `landing` is marked once the copy is done (the
    // CPU backend copies at once). Work that overwrites those points must join_download() first.
    virtual void download_box(FieldView<const T> src, const Box& box, T* dst,
                              std::shared_ptr<Landing> landing) = 0;
    // The boundary lane's later work waits for the last download_box.
    virtual void join_download() = 0;

    // out(p) = stencil(in, p) for every p in `box`. With a `sum`, the same pass also sums
    // stencil_sum_term(out(p), in(p)) over the box (in double) into the fold's partials. The CUDA
    // backend compiles the sums in use only: the squared change for jacobi, the product for heat.
    virtual void apply(const StencilParams<T>& params, FieldView<const T> in, FieldView<T> out,
                       const Box& box, Lane lane, StencilSum sum) = 0;
    // Each face's box of `u` to its buffer (pack), each buffer into its box (unpack), each box
    // from the points `shift` away in the same field (wrap; the boxes must not overlap their
    // sources), all faces in one pass.
    virtual void pack(FieldView<const T> u, const FaceMoves<T>& faces, Lane lane) = 0;
    virtual void unpack(FieldView<T> u, const FaceMoves<T>& faces, Lane lane) = 0;
    virtual void wrap(FieldView<T> u, const FaceMoves<T>& faces, Lane lane) = 0;
    // Each box from its mirror images (reflect): u(p) = 2 u(q) - u(2q - p), q the point of the
    // plane on p's line along the axis (an odd reflection about the plane's values).
    virtual void reflect(FieldView<T> u, const FaceMoves<T>& faces, Lane lane) = 0;
    // u = value at every point of `box`, ordered on the boundary lane.
    virtual void fill(FieldView<T> u, const Box& box, T value) = 0;

    // Each lane's later work waits for the other lane's work issued so far.
    virtual void join_lanes() = 0;
    // Blocks the host until the lane's work so far is done.
    virtual void wait(Lane lane) = 0;

    virtual std::unique_ptr<IntervalTimer> make_interval_timer() = 0;
    // Bandwidth of a large copy in backend memory, bytes read + written per second.
    virtual double measure_copy_bandwidth() = 0;
    // Bytes of backend memory free for allocation now (device memory on a GPU; on the CPU the
    // host's available memory, shared with the node's other ranks).
    [[nodiscard]] virtual std::size_t free_memory() const = 0;

    // The parts every backend has.
    FoldedSums& sums() { return *parts_.sums; }
    FieldReductions<T>& reductions() { return *parts_.reductions; }
    VectorOps<T>& vector_ops() { return *parts_.vector_ops; }
    // The capabilities, nullptr where this backend has none.
    [[nodiscard]] BoxSweeps<T>* box_sweeps() const { return parts_.box_sweeps; }
    [[nodiscard]] TimeBlocking<T>* time_blocking() const { return parts_.time_blocking; }
    [[nodiscard]] LevelSums<T>* level_sums() const { return parts_.level_sums; }
    [[nodiscard]] Recorder* recorder() const { return parts_.recorder; }
    // The most sweeps of `kind` one pass takes: time_blocking()'s, else 1.
    [[nodiscard]] int levels_per_pass(int dims, StencilKind kind) const {
        return parts_.time_blocking != nullptr ? parts_.time_blocking->max_levels(dims, kind) : 1;
    }
    // The sweeps of `kind` one pass over memory advances: time_blocking()'s levels on chip,
    // else 1 (the report's sweeps per pass).
    [[nodiscard]] int levels_per_memory_pass(int dims, StencilKind kind) const {
        return parts_.time_blocking != nullptr ? parts_.time_blocking->levels_on_chip(dims, kind)
                                               : 1;
    }

protected:
    struct Parts {
        FoldedSums* sums = nullptr;
        FieldReductions<T>* reductions = nullptr;
        VectorOps<T>* vector_ops = nullptr;
        BoxSweeps<T>* box_sweeps = nullptr;
        TimeBlocking<T>* time_blocking = nullptr;
        LevelSums<T>* level_sums = nullptr;
        Recorder* recorder = nullptr;
    };
    // Called once by the implementation's constructor (its body: every part constructed), with
    // every part it has; the three every backend has must be given.
    void set_parts(const Parts& parts) {
        if (parts.sums == nullptr || parts.reductions == nullptr || parts.vector_ops == nullptr)
            throw std::logic_error("a backend without sums, reductions or vector operations");
        parts_ = parts;
    }

private:
    Parts parts_;
};

template <class T>
std::unique_ptr<Backend<T>> make_cpu_backend();

// The host's available memory in bytes (MemAvailable; 0 when unknown).
std::size_t available_host_memory();

// Wall-clock intervals (the CPU backend's, and the host-side phases of any backend).
std::unique_ptr<IntervalTimer> make_wall_clock_timer();

}  // namespace gridsim
