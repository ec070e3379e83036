// blocks.cpp — decoded blocks (fourdgs.h, "Decoded blocks"): a block handle, the columns and the
// description of what it holds, and the reads that fill it — every gaussian of a gaussian-birth
// file, or the state at t of either temporal model — and its evaluation at t. A stream fills
// blocks too (stream.cpp), through the same read_into().
#include "fourdgs_c_internal.hpp"

#include <vector>

using namespace fourdgs;
using namespace fourdgs::capi;

namespace {

// A column to lend: NULL when it is empty.
template <class T, class A>
const T* column(const std::vector<T, A>& v) noexcept {
    return v.empty() ? nullptr : v.data();
}

fourdgs_block_columns block_columns_out(const GaussianBlock& b) noexcept {
    fourdgs_block_columns c{};
    c.count = b.count;
    if (b.count != 0) {
        c.position = column(b.position);
        c.scale = column(b.scale);
        c.rotation = column(b.rotation);
        c.color = column(b.color);
        c.motion = column(b.motion);
        c.mu_t = column(b.mu_t);
        c.sigma_t = column(b.sigma_t);
        c.win_lo = column(b.win_lo);
        c.win_hi = column(b.win_hi);
        c.flags = column(b.flags);
        c.window_index = column(b.window_index);
        c.object_id = column(b.object_id);
        c.source_group = b.has_source_ids ? column(b.source_group) : nullptr;
        c.source_index = b.has_source_ids ? column(b.source_index) : nullptr;
        c.gaussian_id = column(b.gaussian_id);
        c.sh = b.sh_per_gaussian() > 0 ? column(b.sh) : nullptr;
    }
    c.sh_degree = static_cast<uint32_t>(b.sh_degree);
    c.sh_per_gaussian = static_cast<size_t>(b.sh_per_gaussian());
    return c;
}

}  // namespace

fourdgs_status fourdgs_block_create(const fourdgs_allocator* allocator, fourdgs_block** out) {
    return create_handle(allocator, out);
}

void fourdgs_block_free(fourdgs_block* block) { destroy_handle(block); }

fourdgs_status fourdgs_block_columns_get(const fourdgs_block* block, fourdgs_block_columns* out) {
    return get_from(block, [](const fourdgs_block& b) { return &b.block; }, block_columns_out, out);
}

fourdgs_status fourdgs_block_info_get(const fourdgs_block* block, fourdgs_block_info* out) {
    return get_from(block, the_handle, [](const fourdgs_block& b) { return b.info; }, out);
}

fourdgs_status fourdgs_reader_read_all(const fourdgs_reader* reader, fourdgs_block* block) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(reader);
        FOURDGS_C_REQUIRE(block);
        return read_into(block, [&] {
            if (auto s = random_access(reader); s != FOURDGS_OK) return s;
            if (reader->opened->keyframe_delta())
                return fail(FOURDGS_UNSUPPORTED, refusal::kReadAllNeedsGaussianBirth,
                            "a keyframe-delta file is a sequence of composed states: read one "
                            "with fourdgs_reader_state_at");
            FOURDGS_C_TRY(reader->opened->read_every_gaussian(block->block, block->workspace,
                                                              reader->options.decode_threads));
            block->info.kind = FOURDGS_BLOCK_ALL;
            return FOURDGS_OK;
        });
    });
}

fourdgs_status fourdgs_reader_state_at(const fourdgs_reader* reader, double t,
                                       fourdgs_block* block) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(reader);
        FOURDGS_C_REQUIRE(block);
        return read_into(block, [&] {
            if (auto s = finite_time(t); s != FOURDGS_OK) return s;
            if (auto s = random_access(reader); s != FOURDGS_OK) return s;
            BlockInfo info;
            FOURDGS_C_TRY(reader->opened->state_at(t, block->block, block->workspace,
                                                   reader->options.decode_threads, &info));
            block_info_out(info, block->info);
            block->info.time = t;
            return FOURDGS_OK;
        });
    });
}

fourdgs_status fourdgs_reader_evaluate_block(const fourdgs_reader* reader,
                                             const fourdgs_block* block, double t,
                                             const fourdgs_evaluate_options* options,
                                             fourdgs_frame* frame) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(reader);
        FOURDGS_C_REQUIRE(block);
        FOURDGS_C_REQUIRE(frame);
        if (auto s = finite_time(t); s != FOURDGS_OK) return s;
        EvaluateOptions eo;
        if (auto s = evaluate_options_in(reader->scene(), options, eo); s != FOURDGS_OK) return s;
        ++frame->fills;  // FrameTracking (counted first: a fill may fail midway)
        evaluate(block->block, t, reader->scene().header.cutoff, frame->frame, eo);
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_reader_evaluate_block_changes(const fourdgs_reader* reader,
                                                     const fourdgs_block* block, double t,
                                                     const fourdgs_evaluate_options* options,
                                                     fourdgs_frame* frame,
                                                     fourdgs_frame_changes* changes) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(reader);
        FOURDGS_C_REQUIRE(block);
        FOURDGS_C_REQUIRE(frame);
        FOURDGS_C_REQUIRE(changes);
        if (auto s = check_size(changes); s != FOURDGS_OK) return s;
        if (auto s = finite_time(t); s != FOURDGS_OK) return s;
        EvaluateOptions eo;
        if (auto s = evaluate_options_in(reader->scene(), options, eo); s != FOURDGS_OK) return s;
        if (eo.append)
            return invalid(refusal::kInvalidOption,
                           "append is 1: a frame whose changes are reported holds one block");
        if (!frame->tracking) frame->tracking = std::make_unique<FrameTracking>();
        FrameTracking& k = *frame->tracking;
        FrameTracking::From from{reader, block, block->reads, frame->fills, eo.with_sh,
                                 eo.max_sh_degree, eo.tracks.data()};
        if (from != k.from) k.changes.forget();
        k.from = {};  // until this call succeeds
        const double cutoff = reader->scene().header.cutoff;
        const ShownBlock shown{&block->block, 0};
        ++frame->fills;
        k.changes.track({&shown, 1}, t, cutoff, eo, frame->frame, k.info.all_changed, k.info.changed,
                        [&](double at, Frame& out) { evaluate(block->block, at, cutoff, out, eo); });
        from.frame_fills = frame->fills;
        k.from = from;
        fourdgs_frame_changes out{};
        out.changed_rows = k.info.changed.empty() ? nullptr : k.info.changed.data();
        out.changed_count = k.info.changed.size();
        out.all_changed = k.info.all_changed ? 1u : 0u;
        return put(changes, out);
    });
}
