// front_ends.cpp — where the C ABI reaches past SceneReader's public calls into the front-end
// underneath (the indexed reader, the keyframe-delta reader, the two streams): the calls only one
// temporal model or one access has, and the descriptions (StateInfo, the last chunk) only a
// front-end gives. Each function is the one place its reach-in lives, marked
// "issue 26: SceneReader interface"; when SceneReader gives the same through its own interface,
// this file goes.
#include "fourdgs_c_internal.hpp"

using namespace fourdgs;
using namespace fourdgs::capi;

namespace {

void state_info_out(const StateInfo& s, fourdgs_block_info& i) noexcept {
    i.kind = FOURDGS_BLOCK_STATE;
    i.offset = s.offset;
    i.length = s.length;
    i.t0 = s.t0;
    i.t1 = s.t1;
    i.level = s.level;
    i.chunk_kind = s.chunk_kind;
    i.delta_mode = s.delta_mode;
    i.depth = s.depth;
    i.reference_offset = s.reference_offset;
    i.keyframe_offset = s.keyframe_offset;
    i.live_count = s.live_count;
    i.update_count = s.update_count;
    i.birth_count = s.birth_count;
    i.death_count = s.death_count;
    i.object_id_stream = s.object_id_stream;
}

}  // namespace

namespace fourdgs::capi {

// issue 26: SceneReader interface — read_by_scan and scan_cause are the indexed reader's.
void scan_out(const SceneReader& scene, fourdgs_scene_info& i) {
    const IndexedReader* base = scene.indexed_base();
    i.read_by_scan = base && base->read_by_scan();
    if (base && base->scan_cause()) i.scan_cause = str(base->scan_cause()->refusal);
}

// issue 26: SceneReader interface — one chunk on its own is the gaussian-birth indexed reader's.
fourdgs_status decode_indexed_chunk(const SceneReader& scene, std::size_t index,
                                    DecodeWorkspace& ws) {
    FOURDGS_C_TRY(scene.indexed()->decode_chunk(index, ws));
    return FOURDGS_OK;
}

// issue 26: SceneReader interface — read_all into one block is the gaussian-birth indexed
// reader's (SceneReader::read_all visits stored blocks instead).
fourdgs_status read_every_gaussian(const SceneReader& scene, fourdgs_block& block,
                                   unsigned threads) {
    const IndexedReader& indexed = *scene.indexed();
    FOURDGS_C_TRY(indexed.read_all(block.block, block.pool, threads));
    return FOURDGS_OK;
}

// issue 26: SceneReader interface — a keyframe-delta state's StateInfo is the keyframe-delta
// reader's, and a gaussian-birth instant into the block's own decode pool is the indexed
// reader's.
fourdgs_status read_state(const SceneReader& scene, double t, fourdgs_block& block,
                          unsigned threads) {
    if (const KeyframeDeltaReader* keyframes = scene.keyframes()) {
        StateInfo info;
        FOURDGS_C_TRY(keyframes->state_at(t, block.block, block.delta, &info));
        state_info_out(info, block.info);
    } else {
        const IndexedReader& indexed = *scene.indexed();
        FOURDGS_C_TRY(indexed.read_instant(t, block.block, block.pool, threads));
        block.info.kind = FOURDGS_BLOCK_INSTANT;
    }
    return FOURDGS_OK;
}

// issue 26: SceneReader interface — pulling one stored block at a time, and the description of
// the block pulled, are the streams' (KeyframeDeltaStream, StreamingReader).
Result<bool> pull_stored_block(SceneReader& scene, fourdgs_block& block) {
    KeyframeDeltaStream* keyframes = scene.keyframe_stream();
    StreamingReader* birth = scene.birth_stream();
    StateInfo state;
    Result<bool> r = keyframes ? keyframes->next_state(block.block, &state)
                               : birth->next_chunk(block.block);
    if (!r.ok()) return r;
    if (!*r) {
        empty_block(block);
    } else if (keyframes) {
        state_info_out(state, block.info);
    } else {
        const ChunkRecord& c = birth->last_chunk();
        block.info.kind = FOURDGS_BLOCK_CHUNK;
        block.info.offset = birth->last_chunk_offset();
        block.info.t0 = c.t0;
        block.info.t1 = c.t1;
        block.info.level = c.level;
        block.info.object_id_stream = birth->last_chunk_object_id_stream();
    }
    return r;
}

}  // namespace fourdgs::capi
