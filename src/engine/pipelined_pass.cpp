// A pass of a pipeline (SweepPlan::pipelined; docs/architecture.md, "One step"): one launch on
// the interior lane whose blocks wait there for the halos of the exchange before it, which may
// still be moving on the boundary lane, and its own halos after it on the boundary lane, beside
// the next pass.
#include "engine/sweep_strategy.hpp"

namespace gridsim {

// The pipeline goes on from its last pass where nothing else has run on these fields since
// (SweepParts::touches: no other pass or sweep, no download the pass waited for) and no transfer
// of this exchange was issued elsewhere (another sweeper's, an initialisation's). Else it starts
// anew: the lanes join, so that every exchange so far has landed, and the face counters restart
// from this pass.
template <class T>
class PipelinedPass final : public SweepStrategy<T> {
public:
    explicit PipelinedPass(SweepParts<T>& s) : s_(s) {}

    void run(const Update<T>& u) override {
        HaloExchange<T>& halo = *s_.halos.halo;
        const bool goes_on =
            open_ && s_.touches == last_touch_ + 1 && halo.transfers_issued() == transfers_;
        if (!goes_on) {
            s_.be.join_lanes();
            halo.restart_arrivals(pass_, Lane::interior);
        }
        s_.cache.lanes_moved();
        HaloArrivals arrivals = halo.arrivals(s_.sub.size[s_.sub.dims - 1]);
        arrivals.pass = pass_;
        PipelinedPasses<T>& pp = *s_.be.time_blocking()->pipelined(s_.sub.dims, s_.geo.kind);
        s_.phases.pipelined(
            [&] {
                pp.apply_levels_pipelined(u.p, s_.fields.current(), s_.fields.next(),
                                          s_.geo.updated, s_.geo.live, u.levels, arrivals, goes_on);
            },
            s_.fields.next());
        open_ = true;
        last_touch_ = s_.touches;
        ++pass_;
        transfers_ = halo.transfers_issued();
        ++s_.pipelined_passes;
    }

private:
    SweepParts<T>& s_;
    bool open_ = false;             // a pass of this pipeline ran
    std::uint64_t last_touch_ = 0;  // SweepParts::touches after its last pass
    unsigned long long pass_ = 0;   // the number of its next pass
    std::uint64_t transfers_ = 0;   // halo transfers issued by the end of its last pass
};

template <class T>
std::unique_ptr<SweepStrategy<T>> make_pipelined(SweepParts<T>& s) {
    return std::make_unique<PipelinedPass<T>>(s);
}

template std::unique_ptr<SweepStrategy<float>> make_pipelined(SweepParts<float>&);
template std::unique_ptr<SweepStrategy<double>> make_pipelined(SweepParts<double>&);

}  // namespace gridsim
