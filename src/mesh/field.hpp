// Fields with halos (docs/architecture.md, "Field layout"). Layout, every backend, host and
// device alike: x fastest, then y, then z; every axis carries `halo` ghost layers on both sides,
// decomposed or not (they hold a neighbour's points, a periodic wrap or nothing a stencil reads);
// 2D fields have one z plane and no z halo. Owned point (i, j, k), 0 <= i < n[0], sits at origin +
// i + j*sy + k*sz; halo points have indices -halo..-1 and n..n+halo-1. With `align` > 1 every row
// is padded so that owned point (0, j, k) starts an `align`-element boundary: a warp's (or a vector
// unit's) row access then touches no extra memory sector, and a 16-byte vector load of points (i,
// j, k)..(i + V - 1, j, k) with i a multiple of V is aligned.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

#include "mesh/host_device.hpp"

namespace gridsim {

struct FieldExtents {
    int dims = 3;
    std::array<int, 3> n{1, 1, 1};  // owned points per axis
    int halo = 1;
    std::int64_t sy = 0;      // stride between rows (elements)
    std::int64_t sz = 0;      // stride between planes (elements)
    std::int64_t origin = 0;  // element index of owned point (0, 0, 0)
    std::int64_t total = 0;   // elements allocated, halos included

    static FieldExtents make(int dims, const std::array<int, 3>& n, int halo, int align = 1) {
        FieldExtents e;
        e.dims = dims;
        e.n = n;
        e.halo = halo;
        const int hz = dims == 3 ? halo : 0;
        const int lead = (align - halo % align) % align;  // padding before the low x halo
        e.sy = ((lead + n[0] + 2 * halo + align - 1) / align) * align;
        e.sz = e.sy * (n[1] + 2 * halo);
        e.origin = lead + halo + e.sy * halo + e.sz * hz;
        // `align` elements of slack at the end: a vector load that starts on an aligned point of
        // the last row may reach past the row's padding (its unused lanes are never stored).
        e.total = e.sz * (n[2] + 2 * hz) + (align > 1 ? align : 0);
        return e;
    }
    GRIDSIM_HD std::int64_t index(int i, int j, int k) const {
        return origin + i + j * sy + k * sz;
    }
};

// x rounded down to a multiple of V (x may be negative: a halo point): where the run of V points
// holding x starts. In a field whose `align` is a multiple of V that run starts on an aligned
// element in every row, so kernels start their packs and tiles there.
template <int V>
GRIDSIM_HD constexpr int pack_start(int x) {
    return x - ((x % V) + V) % V;
}

// The points of T in a 32-byte memory sector: kernels whose rows start at pack_start of this many
// points touch the fewest sectors a row.
template <class T>
inline constexpr int kSectorPoints = 32 / static_cast<int>(sizeof(T));

// Non-owning view for kernels and loops (T may be const). Trivially copyable, passed by value.
template <class T>
struct FieldView {
    T* data = nullptr;
    FieldExtents ext;

    GRIDSIM_HD T& operator()(int i, int j, int k) const { return data[ext.index(i, j, k)]; }
    // A mutable view converts to a read-only one (implicitly: kernels take FieldView<const T>).
    template <class U = T, class = std::enable_if_t<!std::is_const_v<U>>>
    operator FieldView<const U>() const {  // NOLINT(google-explicit-constructor)
        return {data, ext};
    }
};

// Owning, move-only array in host or device memory. The deleter is chosen by whoever
// allocates (host here, cudaFree in the CUDA backend), so this layer needs no CUDA.
template <class T>
class Buffer {
public:
    using FreeFn = void (*)(void*);

    Buffer() = default;
    Buffer(T* data, std::size_t size, FreeFn free_fn) : data_(data), size_(size), free_(free_fn) {}
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    Buffer(Buffer&& o) noexcept { swap(o); }
    Buffer& operator=(Buffer&& o) noexcept {
        Buffer tmp(std::move(o));
        swap(tmp);
        return *this;
    }
    ~Buffer() {
        if (data_ != nullptr) free_(data_);
    }

    // Zero-filled host memory, 64-byte aligned (cache line; AVX-512 friendly rows).
    static Buffer host(std::size_t size) {
        const std::size_t bytes = ((size * sizeof(T) + 63) / 64) * 64;
        void* p = std::aligned_alloc(64, bytes == 0 ? 64 : bytes);
        if (p == nullptr) throw std::bad_alloc();
        std::memset(p, 0, bytes);
        return Buffer(static_cast<T*>(p), size, &std::free);
    }

    [[nodiscard]] T* data() const { return data_; }
    [[nodiscard]] std::size_t size() const { return size_; }

private:
    void swap(Buffer& o) noexcept {
        std::swap(data_, o.data_);
        std::swap(size_, o.size_);
        std::swap(free_, o.free_);
    }

    T* data_ = nullptr;
    std::size_t size_ = 0;
    FreeFn free_ = nullptr;
};

// One rank's field on the host with its precision erased: what the solver hands to the I/O
// layer (float or double per `single`), halos and row padding included.
struct HostField {
    const void* data = nullptr;
    bool single = false;  // float (true) or double
    FieldExtents ext;
};

// A field: its extents and the buffer that holds them.
template <class T>
class Field {
public:
    Field() = default;
    Field(const FieldExtents& ext, Buffer<T> buf) : ext_(ext), buf_(std::move(buf)) {}

    [[nodiscard]] const FieldExtents& extents() const { return ext_; }
    [[nodiscard]] FieldView<T> view() { return {buf_.data(), ext_}; }
    [[nodiscard]] FieldView<const T> view() const { return {buf_.data(), ext_}; }

private:
    FieldExtents ext_;
    Buffer<T> buf_;
};

}  // namespace gridsim
