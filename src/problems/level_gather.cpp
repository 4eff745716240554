#include "problems/level_gather.hpp"

#include "parallel/collectives.hpp"
#include "parallel/mpi_check.hpp"

namespace gridsim {

template <class T>
LevelGather<T>::LevelGather(MPI_Comm comm, Backend<T>& be, const Subdomain& mine)
    : comm_(duplicate_comm(comm)), be_(be), mine_{mine.offset, mine.size} {
    int rank = 0;
    int ranks = 1;
    GRIDSIM_MPI_CHECK(MPI_Comm_rank(comm_.get(), &rank));
    GRIDSIM_MPI_CHECK(MPI_Comm_size(comm_.get(), &ranks));
    const std::array<int, 6> own{mine.offset[0], mine.offset[1], mine.offset[2],
                                 mine.size[0],   mine.size[1],   mine.size[2]};
    std::vector<int> all(rank == 0 ? 6 * ranks : 0);
    GRIDSIM_MPI_CHECK(MPI_Gather(own.data(), 6, MPI_INT, all.data(), 6, MPI_INT, 0, comm_.get()));
    if (rank != 0) return;
    int total = 0;
    for (int r = 0; r < ranks; ++r) {
        const int* b = &all[6 * r];
        blocks_.push_back({{b[0], b[1], b[2]}, {b[3], b[4], b[5]}});
        counts_.push_back(b[3] * b[4] * b[5]);
        displs_.push_back(total);
        total += counts_.back();
    }
    all_.resize(total);
}

template <class T>
void LevelGather<T>::pack(const std::vector<T>& field, const FieldExtents& ext, const Block& block,
                          T* packed) {
    for (int k = 0; k < block.size[2]; ++k)
        for (int j = 0; j < block.size[1]; ++j)
            for (int i = 0; i < block.size[0]; ++i)
                *packed++ =
                    field[ext.index(block.offset[0] + i, block.offset[1] + j, block.offset[2] + k)];
}

template <class T>
void LevelGather<T>::unpack(const T* packed, const Block& block, const FieldExtents& ext,
                            std::vector<T>& field) {
    for (int k = 0; k < block.size[2]; ++k)
        for (int j = 0; j < block.size[1]; ++j)
            for (int i = 0; i < block.size[0]; ++i)
                field[ext.index(block.offset[0] + i, block.offset[1] + j, block.offset[2] + k)] =
                    *packed++;
}

template <class T>
void LevelGather<T>::gather(FieldView<T> part, const FieldView<T>* whole) {
    be_.join_lanes();
    be_.download(part, field_);
    const Block here{{0, 0, 0}, mine_.size};
    packed_.resize(static_cast<std::size_t>(mine_.size[0]) * mine_.size[1] * mine_.size[2]);
    pack(field_, part.ext, here, packed_.data());
    GRIDSIM_MPI_CHECK(MPI_Gatherv(packed_.data(), static_cast<int>(packed_.size()), mpi_type<T>(),
                                  all_.data(), counts_.data(), displs_.data(), mpi_type<T>(), 0,
                                  comm_.get()));
    if (whole == nullptr) return;
    field_.assign(static_cast<std::size_t>(whole->ext.total), T(0));
    for (std::size_t r = 0; r < blocks_.size(); ++r)
        unpack(all_.data() + displs_[r], blocks_[r], whole->ext, field_);
    be_.upload(field_, *whole);
}

template <class T>
void LevelGather<T>::scatter(const FieldView<T>* whole, FieldView<T> part) {
    if (whole != nullptr) {
        be_.join_lanes();
        be_.download(*whole, field_);
        for (std::size_t r = 0; r < blocks_.size(); ++r)
            pack(field_, whole->ext, blocks_[r], all_.data() + displs_[r]);
    }
    packed_.resize(static_cast<std::size_t>(mine_.size[0]) * mine_.size[1] * mine_.size[2]);
    GRIDSIM_MPI_CHECK(MPI_Scatterv(all_.data(), counts_.data(), displs_.data(), mpi_type<T>(),
                                   packed_.data(), static_cast<int>(packed_.size()), mpi_type<T>(),
                                   0, comm_.get()));
    field_.assign(static_cast<std::size_t>(part.ext.total), T(0));
    unpack(packed_.data(), Block{{0, 0, 0}, mine_.size}, part.ext, field_);
    be_.join_lanes();
    be_.upload(field_, part);
}

template class LevelGather<float>;
template class LevelGather<double>;

}  // namespace gridsim
