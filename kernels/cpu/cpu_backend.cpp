// The CPU backend: plain loops over kernels/stencil.hpp, x innermost so the compiler can
// vectorise the contiguous rows. Work runs on the calling thread as soon as it is issued.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <type_traits>

#include "kernels/backend.hpp"
#include "kernels/cpu/stencil_loops.hpp"

namespace gridsim {

namespace {

using cpu::add_row_terms;
using cpu::apply_box;
using cpu::for_each_row;
using cpu::level_box;

// row(face, i, j, k, at, bytes) for every row of every face of `m`: the row starts at point
// (i, j, k), at element `at` of the face's buffer (x fastest), and holds `bytes` bytes.
template <class T, class F>
void for_each_face_row(const FaceMoves<T>& m, F&& row) {
    for (int f = 0; f < m.count; ++f) {
        const Box& b = m.box[f];
        const int nx = b.hi[0] - b.lo[0];
        long long at = 0;
        for_each_row(b, [&](int j, int k) {
            row(f, b.lo[0], j, k, at, sizeof(T) * nx);
            at += nx;
        });
    }
}

// f(dims, stencil): the run-time dims as std::integral_constant, the kind as its stencil type.
template <class F>
void visit_stencil(int dims, StencilKind kind, F&& f) {
    auto with_kind = [&](auto d) { by_stencil_kind(kind, [&](auto k) { f(d, k); }); };
    if (dims == 2) {
        with_kind(std::integral_constant<int, 2>{});
    } else {
        with_kind(std::integral_constant<int, 3>{});
    }
}

using Clock = std::chrono::steady_clock;

class WallClockTimer final : public IntervalTimer {
public:
    void begin(int slot, Lane /*lane*/) override { open_.push_back({slot, Clock::now()}); }
    void end(int slot, Lane /*lane*/) override {
        for (auto it = open_.rbegin(); it != open_.rend(); ++it) {
            if (it->first != slot) continue;
            done_.push_back(
                {slot, std::chrono::duration<double>(Clock::now() - it->second).count()});
            open_.erase(std::next(it).base());
            return;
        }
    }
    void collect(std::vector<double>& seconds, bool /*block*/) override {
        for (const auto& [slot, s] : done_) seconds[slot] += s;
        done_.clear();
    }

private:
    std::vector<std::pair<int, Clock::time_point>> open_;
    std::vector<std::pair<int, double>> done_;
};

template <class T>
class CpuBackend final : public Backend<T>,
                         FoldedSums,
                         FieldReductions<T>,
                         VectorOps<T>,
                         TimeBlocking<T>,
                         LevelSums<T> {
public:
    // No box sweeps, no recording; passes (summing or not) level by level.
    CpuBackend() { this->set_parts({this, this, this, nullptr, this, this, nullptr}); }

    [[nodiscard]] std::string name() const override { return "cpu"; }
    [[nodiscard]] std::string launch_description(StencilKind /*kind*/,
                                                 int /*dims*/) const override {
        return "loops, x innermost";
    }
    [[nodiscard]] bool on_device() const override { return false; }
    [[nodiscard]] void* native_stream(Lane /*lane*/) const override { return nullptr; }
    [[nodiscard]] int row_alignment() const override {
        return static_cast<int>(64 / sizeof(T));
    }  // a cache line

    Buffer<T> allocate(std::size_t elements) override { return Buffer<T>::host(elements); }
    Buffer<T> allocate_host(std::size_t elements) override { return Buffer<T>::host(elements); }
    void copy(T* dst, const T* src, std::size_t n, Lane /*lane*/) override {
        std::memcpy(dst, src, n * sizeof(T));
    }

    void fill_initial(const InitialParams& p, FieldView<T> u,
                      const std::array<int, 3>& origin) override {
        const Box owned{{0, 0, 0}, u.ext.n};
        for_each_row(owned, [&](int j, int k) {
            for (int i = 0; i < u.ext.n[0]; ++i) {
                const int g[3] = {origin[0] + i, origin[1] + j, origin[2] + k};
                u(i, j, k) = static_cast<T>(initial_value(p, g));
            }
        });
    }
    void upload(const std::vector<T>& host, FieldView<T> dst) override {
        std::copy(host.begin(), host.end(), dst.data);
    }
    void download(FieldView<const T> src, std::vector<T>& host) override {
        host.assign(src.data, src.data + src.ext.total);
    }
    void download_box(FieldView<const T> src, const Box& b, T* dst,
                      std::shared_ptr<Landing> landing) override {
        const std::size_t row = static_cast<std::size_t>(b.hi[0] - b.lo[0]);
        for_each_row(b, [&](int j, int k) {
            std::memcpy(dst, &src(b.lo[0], j, k), row * sizeof(T));
            dst += row;
        });
        landing->land();
    }
    void join_download() override {}

    void apply(const StencilParams<T>& p, FieldView<const T> in, FieldView<T> out, const Box& b,
               Lane /*lane*/, StencilSum sum_kind) override {
        if (b.empty()) return;
        visit_stencil(in.ext.dims, p.kind, [&](auto dims, auto kind) {
            partial_sum_ += apply_box<T, dims.value, decltype(kind)>(in, out, b, p.r, sum_kind);
        });
    }
    // Passes, summing or not, level by level (each level a pass over memory of its own), so
    // that CI runs the schedule of the CUDA backend's passes: level l over `box` grown by the
    // stencil's radius for each level still to come (but for the points no live point reads),
    // from the level before (`in` for the first) into a scratch field, then the reflections of
    // that field (Backend::reflect), the last level into `out`. Each point is stencil_at of the
    // same values as in apply(), so `out` is bitwise that of `levels` sweeps.
    [[nodiscard]] int max_levels(int /*dims*/, StencilKind /*kind*/) const override {
        return kMaxLevels;
    }
    [[nodiscard]] int levels_on_chip(int /*dims*/, StencilKind /*kind*/) const override {
        return 1;
    }
    void apply_levels(const StencilParams<T>& p, FieldView<const T> in, FieldView<T> out,
                      const Box& box, const Box& live, int levels, const FaceMoves<T>& reflections,
                      Lane /*lane*/) override {
        run_levels(p, in, out, box, live, levels, reflections, false);
    }
    [[nodiscard]] bool sums_levels(const std::vector<Box>& /*sum_boxes*/,
                                   int /*dims*/) const override {
        return true;
    }
    void start_summing_pass(const std::vector<Box>& sum_boxes, int /*levels*/) override {
        sum_boxes_ = sum_boxes;
    }
    void apply_levels_summing(const StencilParams<T>& p, FieldView<const T> in, FieldView<T> out,
                              const Box& box, const Box& live, int levels, Lane /*lane*/) override {
        run_levels(p, in, out, box, live, levels, FaceMoves<T>{}, true);
    }
    int fold_and_read_levels(int levels) override {
        const int id = static_cast<int>(reads_issued_++ % Backend<T>::kReads);
        std::copy_n(level_sums_.begin(), levels, level_reads_[id].begin());
        level_sums_.fill(0.0);
        return id;
    }
    double finish_read_level(int id, int level) override { return level_reads_.at(id).at(level); }

    // Boxes are applied in a fixed order on one thread, so the running sum is reproducible.
    double* fold_residual() override {
        folded_ = partial_sum_;
        partial_sum_ = 0.0;
        return &folded_;
    }
    void join_fold(Lane /*lane*/) override {}
    // Reads complete at once; the value waits in a ring slot for finish_read.
    int fold_and_read() override {
        const int id = static_cast<int>(reads_issued_++ % Backend<T>::kReads);
        reads_[id] = *fold_residual();
        return id;
    }
    double finish_read(int id) override { return reads_[id]; }

    void pack(FieldView<const T> u, const FaceMoves<T>& m, Lane /*lane*/) override {
        for_each_face_row(m, [&](int f, int i, int j, int k, long long at, std::size_t bytes) {
            std::memcpy(m.buf[f] + at, &u(i, j, k), bytes);
        });
    }
    void unpack(FieldView<T> u, const FaceMoves<T>& m, Lane /*lane*/) override {
        for_each_face_row(m, [&](int f, int i, int j, int k, long long at, std::size_t bytes) {
            std::memcpy(&u(i, j, k), m.buf[f] + at, bytes);
        });
    }
    void wrap(FieldView<T> u, const FaceMoves<T>& m, Lane /*lane*/) override {
        for_each_face_row(m, [&](int f, int i, int j, int k, long long, std::size_t bytes) {
            const auto& s = m.shift[f];
            std::memcpy(&u(i, j, k), &u(i + s[0], j + s[1], k + s[2]), bytes);
        });
    }

    void reflect(FieldView<T> u, const FaceMoves<T>& m, Lane /*lane*/) override {
        for_each_face_row(m, [&](int f, int i, int j, int k, long long, std::size_t bytes) {
            for (int x = 0; x < static_cast<int>(bytes / sizeof(T)); ++x)
                m.reflect_point(u, f, i + x, j, k);
        });
    }

    double sum_sq_diff(FieldView<const T> a, FieldView<const T> c, const Box& b) override {
        double sum = 0.0;
        for_each_row(b, [&](int j, int k) {
            for (int i = b.lo[0]; i < b.hi[0]; ++i) {
                const double d = static_cast<double>(a(i, j, k)) - static_cast<double>(c(i, j, k));
                sum += d * d;
            }
        });
        return sum;
    }
    double sum_sq(FieldView<const T> a, const Box& b) override {
        double sum = 0.0;
        for_each_row(b, [&](int j, int k) {
            for (int i = b.lo[0]; i < b.hi[0]; ++i) {
                const double v = a(i, j, k);
                sum += v * v;
            }
        });
        return sum;
    }

    FieldStats stats(FieldView<const T> a, const Box& b) override {
        FieldStats st;
        st.min = std::numeric_limits<double>::infinity();
        st.max = -std::numeric_limits<double>::infinity();
        for_each_row(b, [&](int j, int k) {
            for (int i = b.lo[0]; i < b.hi[0]; ++i) {
                const double v = a(i, j, k);
                if (!std::isfinite(v)) {
                    ++st.nonfinite;
                    continue;
                }
                st.min = std::min(st.min, v);
                st.max = std::max(st.max, v);
                st.sum += v;
            }
        });
        return st;
    }

    void fill(FieldView<T> u, const Box& b, T value) override {
        for_each_row(b, [&](int j, int k) {
            std::fill(&u(b.lo[0], j, k), &u(b.lo[0], j, k) + (b.hi[0] - b.lo[0]), value);
        });
    }

    // Nothing to load or set up before the first vector operation.
    void prepare() override {}
    // The BLAS sequence over whole allocations; sums in double, in index order.
    void axpy(T a, FieldView<const T> x, FieldView<T> y) override {
        for (std::int64_t n = 0; n < x.ext.total; ++n) y.data[n] += a * x.data[n];
    }
    void scale(T a, FieldView<T> x) override {
        for (std::int64_t n = 0; n < x.ext.total; ++n) x.data[n] *= a;
    }
    void dot(FieldView<const T> x, FieldView<const T> y, double* sum) override {
        double s = 0.0;
        for (std::int64_t n = 0; n < x.ext.total; ++n)
            s += static_cast<double>(x.data[n]) * static_cast<double>(y.data[n]);
        *sum = s;
    }
    // The fused passes over a box.
    void cg_update(const CgUpdate<T>& s, const Box& b, double* sum) override {
        double total = 0.0;
        for_each_row(b, [&](int j, int k) {
            for (int i = b.lo[0]; i < b.hi[0]; ++i) total += cg_update_point(s, i, j, k);
        });
        *sum = total;
    }
    void xpay(FieldView<const T> z, T beta, FieldView<T> p, const Box& b) override {
        for_each_row(b, [&](int j, int k) {
            for (int i = b.lo[0]; i < b.hi[0]; ++i) xpay_point(z, beta, p, i, j, k);
        });
    }
    void chebyshev_step(const ChebyshevStep<T>& s, const Box& b) override {
        for_each_row(b, [&](int j, int k) {
            for (int i = b.lo[0]; i < b.hi[0]; ++i) chebyshev_point(s, i, j, k);
        });
    }
    // The halved axes and the dimensions chosen once per call, outside the loops; the loops
    // read a local copy of the parameters, which their stores cannot alias (so the compiler
    // keeps them in registers and vectorises the rows).
    void restrict_to(const GridTransfer<T>& given, const Box& b) override {
        const GridTransfer<T> t = given;
        by_halvings(t, [&](auto h) {
            for_each_row(b, [&](int j, int k) {
                for (int i = b.lo[0]; i < b.hi[0]; ++i) restrict_point<T, decltype(h)>(t, i, j, k);
            });
        });
    }
    void prolong_add(const GridTransfer<T>& given, const Box& b) override {
        const GridTransfer<T> t = given;
        by_halvings(t, [&](auto h) {
            for_each_row(b, [&](int j, int k) {
                for (int i = b.lo[0]; i < b.hi[0]; ++i) prolong_point<T, decltype(h)>(t, i, j, k);
            });
        });
    }
    void combine(const StencilCombination<T>& given, const Box& b) override {
        const StencilCombination<T> s = given;
        by_combination(s, [&](auto c) {
            for_each_row(b, [&](int j, int k) {
                for (int i = b.lo[0]; i < b.hi[0]; ++i)
                    combination_point<T, decltype(c)>(s, i, j, k);
            });
        });
    }
    // Host memory: the sums are where the host reads them.
    double* sum_slots() override { return sums_.data(); }
    void read_sums(const double* src, int n, double* host) override { std::copy_n(src, n, host); }

    void join_lanes() override {}
    void wait(Lane /*lane*/) override {}
    std::unique_ptr<IntervalTimer> make_interval_timer() override {
        return make_wall_clock_timer();
    }

    [[nodiscard]] std::size_t free_memory() const override { return available_host_memory(); }

    double measure_copy_bandwidth() override {
        const std::size_t n = (std::size_t{64} << 20) / sizeof(T);  // 64 MiB, well past the caches
        Buffer<T> a = Buffer<T>::host(n);
        Buffer<T> b = Buffer<T>::host(n);
        double best = std::numeric_limits<double>::infinity();
        for (int rep = 0; rep < 5; ++rep) {
            const auto t0 = Clock::now();
            std::memcpy(b.data(), a.data(), n * sizeof(T));
            // The copy's result is never read: keep the compiler from dropping it.
            asm volatile("" : : "r"(b.data()) : "memory");
            best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
        }
        return 2.0 * static_cast<double>(n * sizeof(T)) / best;
    }

private:
    // The most levels of a pass, the CUDA 2D passes' (docs/tuning.md, "Passes on the CPU backend").
    static constexpr int kMaxLevels = 8;

    // With `sums`, each level's squared change over the pass's sum boxes inside `box`, box by box
    // as apply() sums a sweep's, is added to that level's running sum: a pass split into calls
    // that take the sum boxes in their order adds them in that order too.
    void run_levels(const StencilParams<T>& p, FieldView<const T> in, FieldView<T> out,
                    const Box& box, const Box& live, int levels, const FaceMoves<T>& reflections,
                    bool sums) {
        if (levels < 1 || levels > kMaxLevels)
            throw std::logic_error("apply_levels: 1 to 8 levels");
        by_stencil_kind(p.kind, [&](auto s) {
            if (sums && decltype(s)::kSum != StencilSum::change)
                throw std::logic_error("apply_levels_summing: a stencil that sums its change");
        });
        if (box.empty()) return;
        const int dims = in.ext.dims;
        const int radius = stencil_radius(p.kind);
        const Box read = live.grown(radius, dims);  // the points live points read
        const auto total = static_cast<std::size_t>(in.ext.total);
        FieldView<const T> src = in;
        for (int l = 1; l <= levels; ++l) {
            Buffer<T>& s = scratch_[l % 2];
            if (l < levels && s.size() != total) s = Buffer<T>::host(total);
            const FieldView<T> dst = l == levels ? out : FieldView<T>{s.data(), in.ext};
            const Box region = box.grown((levels - l) * radius, dims).clipped(read);
            visit_stencil(dims, p.kind, [&](auto d, auto kind) {
                level_box<T, d.value, decltype(kind)>(src, dst, region, live, p.r);
            });
            if (l < levels) reflect(dst, reflections, Lane::boundary);
            if (sums) add_level_sums(dst, src, box, l);
            src = dst;
        }
    }
    void add_level_sums(FieldView<const T> now, FieldView<const T> before, const Box& box, int l) {
        for (const Box& b : sum_boxes_) {
            if (!box.holds(b)) continue;
            double sum = 0.0;
            for_each_row(b, [&](int j, int k) {
                sum = add_row_terms<StencilSum::change, T>(sum, now, before, b, j, k);
            });
            level_sums_[l - 1] += sum;
        }
    }

    // The levels between in and out, laid out (and aligned) as the fields.
    std::array<Buffer<T>, 2> scratch_;
    std::vector<Box> sum_boxes_;  // the summing pass's (start_summing_pass)
    std::array<double, kMaxLevels> level_sums_{};
    std::array<std::array<double, kMaxLevels>, Backend<T>::kReads> level_reads_{};
    double partial_sum_ = 0.0;  // fused residual since the last fold
    double folded_ = 0.0;
    std::array<double, Backend<T>::kReads> reads_{};
    std::uint64_t reads_issued_ = 0;
    std::array<double, Backend<T>::kSumSlots> sums_{};
};

}  // namespace

std::size_t available_host_memory() {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    std::size_t kib = 0;
    std::string unit;
    while (meminfo >> key >> kib >> unit) {
        if (key == "MemAvailable:") return kib * 1024;
    }
    return 0;
}

std::unique_ptr<IntervalTimer> make_wall_clock_timer() {
    return std::make_unique<WallClockTimer>();
}

template <class T>
std::unique_ptr<Backend<T>> make_cpu_backend() {
    return std::make_unique<CpuBackend<T>>();
}

template std::unique_ptr<Backend<float>> make_cpu_backend<float>();
template std::unique_ptr<Backend<double>> make_cpu_backend<double>();

}  // namespace gridsim
