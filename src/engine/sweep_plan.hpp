// What a run's sweeps do, decided once at start-up and then only read: the boxes of one rank's
// sweeps (SweepGeometry) and the plan chosen for them (SweepPlan: engine/tuner.hpp builds it).
// Every rule here and its threshold is a row of docs/tuning.md.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "config/config.hpp"
#include "kernels/stencil.hpp"
#include "mesh/domain.hpp"

namespace gridsim {

// What the problem's loop runs between halo exchanges, for parallel.time_block = "auto": sweeps
// without a residual that a pass could take several at a time (heat, jacobi with a residual every
// n > 1 sweeps), sweeps that each sum their change (jacobi with a residual every sweep: passes
// that sum every level, where the backend can), or nothing a pass could take (the CG: "auto" is
// 1).
enum class Blocks { none, plain, summing };

// The boxes of one rank's sweeps, the same whatever the plan.
struct SweepGeometry {
    // The split of a sweep: its shell this deep whatever the run's halo, so that the boxes a
    // residual is summed over, and so its bits, are the same for every block; as deep as a pass's
    // most levels and as the halos of every k up to 8 of a star of radius 1 (deeper halos move
    // after the whole sweep). Deeper, it would move more of every small subdomain's sweep ahead
    // of its exchange.
    static constexpr int kSweepShellDepth = 8;

    // `stencil`: the stencil's kind; a star wider than one point also reads halos beyond the
    // fixed faces, which the exchange reflects, so the shell covers those faces too.
    SweepGeometry(const Subdomain& sub, StencilKind stencil)
        : kind(stencil),
          radius(stencil_radius(stencil)),
          plain_star(stencil_plain_star(stencil)),
          owned{{0, 0, 0}, sub.size},
          updated(updated_box(sub)),
          live(extend_into_halos(updated, sub, 1 << 24)),
          regions(split_for_overlap(updated, sub, kSweepShellDepth, radius > 1)) {
        for (const Box& b : regions.shell) {
            if (!b.empty()) sum_boxes.push_back(b);
        }
        if (!regions.interior.empty()) sum_boxes.push_back(regions.interior);
    }

    StencilKind kind;
    int radius;  // the stencil's: a sweep reads `radius` halo layers
    // Whether the stencil is a plain star (kPlainStar): the fused sweep's wrap takes only those
    // (how many levels a pass takes the backend says per stencil: levels_per_pass).
    bool plain_star;
    // The halo layers of a field that `block` sweeps run between exchanges on.
    [[nodiscard]] int halo_layers(int block) const { return block * radius; }
    Box owned;
    Box updated;
    Box live;  // every point a sweep may update: the updated box, unbounded across neighbours
    SweepRegions regions;
    std::vector<Box> sum_boxes;  // the boxes a residual sweep sums over, in order: shell, interior
};

// How a block's exchanging pass runs (the exchange trial's choice, or parallel.overlap): its
// shell, then the halos beside the interior (split); every point in one launch, then the halos
// (fused); every point in one launch that writes the faces an exchange reads first, the halos
// moving beside the rest of it (faces_first; where the backend writes faces first); every point
// in one launch on the interior lane, the halos moving beside the next pass, whose blocks wait
// for them before they read them (pipelined; where the halo setup pipelines, else fused).
enum class ExchangePass { split, fused, faces_first, pipelined };

// How the sweeps run: fixed once the start-up trials are done, the same on every rank.
struct SweepPlan {
    Blocks blocks = Blocks::plain;
    OverlapMode overlap = OverlapMode::automatic;
    int block = 1;        // sweeps between halo exchanges
    int pass_levels = 0;  // the most levels a pass of a block takes; 0: the backend's most
    bool can_sum_in_passes = false;                    // tuner.hpp, can_sum_in_passes
    ExchangePass exchange_pass = ExchangePass::split;  // the exchange trial's choice
    bool record_sweeps = false;                        // parallel.graphs resolved
    bool record_residuals = false;    // "auto" records residual sweeps of small subdomains only
    int wrap_period = 0;              // tuner.hpp, kernel_wrap_period
    bool local_only = false;          // no neighbour on another rank
    bool box_sweeps = false;          // the backend sweeps several boxes in one launch
    std::int64_t updated_points = 0;  // this rank's

    // The most levels of one summing pass (the CUDA pass's; the CPU's sums level by level).
    static constexpr int kMostSummingLevels = 8;
    // Above this many updated points the one launch of a summing sweep (a block finds its box
    // among several) is slower than the split's launches (docs/tuning.md).
    static constexpr std::int64_t kFusedSumPoints = std::int64_t{1} << 24;

    // Residual sweeps run as passes of several levels: time_block > 1 and can_sum_in_passes.
    [[nodiscard]] bool sums_in_passes() const {
        return blocks == Blocks::summing && block > 1 && can_sum_in_passes;
    }
    [[nodiscard]] bool overlapped() const { return overlap != OverlapMode::off; }
    // overlap "auto", no neighbour on another rank: no transfer to hide, so every updated point
    // in one launch on the boundary lane, then the halos (a periodic self-copy, if any), instead
    // of a shell, an interior and a lane join. A sweep with a sum fuses only where the backend
    // keeps the split's partials in one launch (box_sweeps), and only on subdomains of at most
    // kFusedSumPoints. With a neighbour on another rank "auto" keeps the split for sweeps of one
    // exchange each (docs/tuning.md, "Overlap on several ranks"); with time blocks the exchange
    // trial chooses for a block's exchanging pass, summing or not (exchange_pass, fuses_pass;
    // a sweep of a block that chose faces first fuses). overlap "fused" and "faces_first" fuse
    // on every rank as "auto" does on a rank without such a neighbour.
    [[nodiscard]] bool fuses(StencilSum sum) const {
        if (!may_fuse(overlap)) return false;
        if (overlap == OverlapMode::automatic && !local_only)
            return sum == StencilSum::none && exchange_pass != ExchangePass::split;
        return sum == StencilSum::none || (box_sweeps && updated_points <= kFusedSumPoints);
    }
    // The exchanging pass of a block writes the faces first where it has no sums.
    [[nodiscard]] bool faces_first(bool sums) const {
        return !sums && exchange_pass == ExchangePass::faces_first;
    }
    // The exchanging pass of a block is pipelined where it has no sums and this rank's halo
    // setup pipelines (HaloSetup::pipelines; elsewhere it fuses).
    [[nodiscard]] bool pipelined(bool sums) const {
        return !sums && exchange_pass == ExchangePass::pipelined;
    }
    // A summing pass can split only where its shell, the sweep's (kSweepShellDepth deep, the
    // boxes its sums are laid out over), holds every layer the exchange sends.
    [[nodiscard]] bool summing_pass_may_split() const {
        return block <= SweepGeometry::kSweepShellDepth;
    }
    // The exchanging pass of a block: one launch, then the halos, where a pass without sums
    // fuses, and a summing pass also where it cannot split.
    [[nodiscard]] bool fuses_pass(bool sums) const {
        return fuses(StencilSum::none) || (sums && !summing_pass_may_split());
    }
};

}  // namespace gridsim
