// A route per neighbour: a rank's faces split among the transports they take (FaceRoutes: ipc to
// the ranks of its node whose GPUs it reaches, NCCL or MPI to the others), each transport moving
// its own faces. Made where the faces of a run take more than one transport; a run whose faces
// all take one has that transport alone (HaloExchange). The transports that issue on the boundary
// lane go first, so that no rank waits on the host for a peer that has not yet issued its device
// work. The registered fields' faces go from field to field by the first route whose transport
// can (FieldStores: ipc). The sums over the ranks go where FaceRoutes::sums says: through NCCL (the
// run's NCCL transport, or one made for the sums alone), else on the host.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "parallel/transport.hpp"

namespace gridsim {

template <class T>
class RoutedTransport final : public Transport<T>, public FieldStores<T> {
public:
    // Collective over `comm` (every rank makes every transport of routes.kinds). `ipc`: as for the
    // ipc transport, whose sums this transport makes none of (they go as routes.sums says).
    RoutedTransport(MPI_Comm comm, Backend<T>& backend, const std::vector<HaloFace<T>>& faces,
                    const FaceRoutes& routes, IpcReach ipc,
                    const std::vector<FieldView<T>>& fields) {
        ipc.sums = false;
        for (TransportKind kind : routes.kinds) {
            Route r;
            r.kind = kind;
            for (std::size_t f = 0; f < faces.size(); ++f) {
                if (routes.face[faces[f].face] != kind) continue;
                r.global.push_back(f);
                r.faces.push_back(faces[f]);
            }
            TransportArgs<T> args{kind, comm, &backend, &r.faces, ipc, &fields};
            r.transport = make_transport<T>(args);
            routes_.push_back(std::move(r));
        }
        // The routes whose transports issue on the boundary lane go first.
        std::stable_sort(routes_.begin(), routes_.end(), [](const Route& a, const Route& b) {
            return !a.transport->host_steps() && b.transport->host_steps();
        });
        // The fields' faces go straight from field to field by the first route that can.
        for (Route& r : routes_)
            if (stores_ == nullptr && r.transport->field_stores() != nullptr) stores_ = &r;
        where_.resize(faces.size());
        for (std::size_t r = 0; r < routes_.size(); ++r)
            for (std::size_t i = 0; i < routes_[r].global.size(); ++i)
                where_[routes_[r].global[i]] = {r, i};
        if (routes.sums == TransportKind::nccl) {
            for (Route& r : routes_)
                if (r.kind == TransportKind::nccl) sums_ = r.transport->device_sums();
            if (sums_ == nullptr) {
                sums_owned_ = make_nccl_sums<T>(comm, backend);
                sums_ = sums_owned_->device_sums();
            }
        }
        for (const Route& r : routes_)
            name_ += (name_.empty() ? "" : "+") + std::string(r.transport->name());
    }

    [[nodiscard]] const char* name() const override { return name_.c_str(); }

    void exchange(std::vector<HaloFace<T>>& /*faces*/, std::size_t first, std::size_t last,
                  bool beside_work) override {
        for (Route& r : routes_) {
            const auto [lo, hi] = r.range(first, last);
            if (lo < hi) r.transport->exchange(r.faces, lo, hi, beside_work);
        }
    }
    [[nodiscard]] bool host_steps() const override {
        for (const Route& r : routes_)
            if (r.transport->host_steps()) return true;
        return false;
    }
    [[nodiscard]] DeviceSums* device_sums() override { return sums_; }
    // The registered fields are one route's (stores_): its faces of them go from field to field.
    // No arrivals: a pipelined pass waits for faces of one transport alone.
    [[nodiscard]] FieldStores<T>* field_stores() override {
        return stores_ != nullptr ? this : nullptr;
    }
    [[nodiscard]] int field_index(const T* data) const override {
        return stores_->transport->field_stores()->field_index(data);
    }
    [[nodiscard]] bool stores_face(std::size_t f) const override {
        const auto [r, i] = where_[f];
        return &routes_[r] == stores_ && stores_->transport->field_stores()->stores_face(i);
    }
    void exchange_field(int field, std::vector<HaloFace<T>>& /*faces*/, std::size_t first,
                        std::size_t last, bool beside_work) override {
        for (Route& r : routes_) {
            const auto [lo, hi] = r.range(first, last);
            if (lo >= hi) continue;
            if (&r == stores_) {
                r.transport->field_stores()->exchange_field(field, r.faces, lo, hi, beside_work);
            } else {
                r.transport->exchange(r.faces, lo, hi, beside_work);
            }
        }
    }

    // How many of this rank's faces each transport takes, in the order the routes go.
    [[nodiscard]] std::vector<std::pair<TransportKind, int>> counts() const {
        std::vector<std::pair<TransportKind, int>> out;
        for (const Route& r : routes_) out.emplace_back(r.kind, static_cast<int>(r.faces.size()));
        return out;
    }

private:
    struct Route {
        TransportKind kind = TransportKind::staged;
        std::unique_ptr<Transport<T>> transport;
        std::vector<HaloFace<T>> faces;   // its faces, in the order of the rank's faces
        std::vector<std::size_t> global;  // each one's index among the rank's faces
        // Its faces among the rank's faces [first, last), as indices into `faces`.
        [[nodiscard]] std::pair<std::size_t, std::size_t> range(std::size_t first,
                                                                std::size_t last) const {
            std::size_t lo = 0;
            while (lo < global.size() && global[lo] < first) ++lo;
            std::size_t hi = lo;
            while (hi < global.size() && global[hi] < last) ++hi;
            return {lo, hi};
        }
    };
    std::vector<Route> routes_;
    std::vector<std::pair<std::size_t, std::size_t>> where_;  // rank's face -> (route, index)
    Route* stores_ = nullptr;     // the route whose transport takes the fields, or none
    DeviceSums* sums_ = nullptr;  // the device sums (NCCL), or none: sums on the host
    std::unique_ptr<Transport<T>> sums_owned_;
    std::string name_;
};

}  // namespace gridsim
