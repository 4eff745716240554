#include "engine/host_mirror.hpp"

#include "parallel/gather.hpp"

namespace gridsim {

// Only the owned points travel, packed by the copy itself: the writer then hands HDF5 the
// buffer as it is, with no packing copy on the host.
template <class T>
StagedField HostMirror<T>::stage_current(void* dst) {
    const Box owned{{0, 0, 0}, topo_.subdomain().size};
    auto landing = std::make_shared<Landing>();
    be_.download_box(fields_.current(), owned, static_cast<T*>(dst), landing);
    fields_.mark_download();
    return {HostField{dst, sizeof(T) == 4, FieldExtents::make(dom_.dims, owned.hi, 0)}, landing};
}

template <class T>
std::shared_ptr<void> HostMirror<T>::allocate_staging() {
    auto buf = std::make_shared<Buffer<T>>(be_.allocate_host(fields_.extents().total));
    return std::shared_ptr<void>(buf, buf->data());  // keeps the Buffer alive
}

template <class T>
void HostMirror<T>::keep_last_good(std::int64_t step) {
    last_good_step_ = step;
    const FieldExtents& ext = fields_.extents();
    if (last_good_.extents().total == 0) last_good_ = be_.allocate_field(ext);
    be_.copy(last_good_.view().data, fields_.current().data, static_cast<std::size_t>(ext.total),
             Lane::boundary);
}

template <class T>
std::vector<double> HostMirror<T>::gather() {
    return gather_to_root(topo_, dom_, current_on_host());
}

template class HostMirror<float>;
template class HostMirror<double>;

}  // namespace gridsim
