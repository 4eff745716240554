#include "problems/level_gather.hpp"

#include "parallel/collectives.hpp"
#include "parallel/mpi_check.hpp"

namespace gridsim {

template <class T>
LevelGather<T>::LevelGather(MPI_Comm comm, Backend<T>& be, const Subdomain& mine)
    : comm_(duplicate_comm(comm)),
      be_(be),
      size_(mine.size),
      blocks_(blocks_on_root(comm_.get(), mine)),
      packed_(static_cast<std::size_t>(mine.size[0]) * mine.size[1] * mine.size[2]),
      all_(static_cast<std::size_t>(blocks_.total)) {}

template <class T>
void LevelGather<T>::pack(const std::vector<T>& field, const FieldExtents& ext,
                          const std::array<int, 3>& offset, const std::array<int, 3>& size,
                          T* packed) {
    for (int k = 0; k < size[2]; ++k)
        for (int j = 0; j < size[1]; ++j)
            for (int i = 0; i < size[0]; ++i)
                *packed++ = field[ext.index(offset[0] + i, offset[1] + j, offset[2] + k)];
}

template <class T>
void LevelGather<T>::unpack(const T* packed, const std::array<int, 3>& offset,
                            const std::array<int, 3>& size, const FieldExtents& ext,
                            std::vector<T>& field) {
    for (int k = 0; k < size[2]; ++k)
        for (int j = 0; j < size[1]; ++j)
            for (int i = 0; i < size[0]; ++i)
                field[ext.index(offset[0] + i, offset[1] + j, offset[2] + k)] = *packed++;
}

template <class T>
void LevelGather<T>::gather(FieldView<T> part, const FieldView<T>* whole) {
    be_.join_lanes();
    be_.download(part, field_);
    pack(field_, part.ext, {0, 0, 0}, size_, packed_.data());
    GRIDSIM_MPI_CHECK(MPI_Gatherv(packed_.data(), static_cast<int>(packed_.size()), mpi_type<T>(),
                                  all_.data(), blocks_.counts.data(), blocks_.displs.data(),
                                  mpi_type<T>(), 0, comm_.get()));
    if (whole == nullptr) return;
    field_.assign(static_cast<std::size_t>(whole->ext.total), T(0));
    for (std::size_t r = 0; r < blocks_.counts.size(); ++r)
        unpack(all_.data() + blocks_.displs[r], blocks_.offset[r], blocks_.size[r], whole->ext,
               field_);
    be_.upload(field_, *whole);
}

template <class T>
void LevelGather<T>::scatter(const FieldView<T>* whole, FieldView<T> part) {
    if (whole != nullptr) {
        be_.join_lanes();
        be_.download(*whole, field_);
        for (std::size_t r = 0; r < blocks_.counts.size(); ++r)
            pack(field_, whole->ext, blocks_.offset[r], blocks_.size[r],
                 all_.data() + blocks_.displs[r]);
    }
    GRIDSIM_MPI_CHECK(MPI_Scatterv(all_.data(), blocks_.counts.data(), blocks_.displs.data(),
                                   mpi_type<T>(), packed_.data(), static_cast<int>(packed_.size()),
                                   mpi_type<T>(), 0, comm_.get()));
    field_.assign(static_cast<std::size_t>(part.ext.total), T(0));
    unpack(packed_.data(), {0, 0, 0}, size_, part.ext, field_);
    be_.upload(field_, part);
}

template class LevelGather<float>;
template class LevelGather<double>;

}  // namespace gridsim
