// fourdgs_player.cpp — the C ABI's player (fourdgs.h, "Playback") over fourdgs::Player.
//
// Like the rest of the C ABI it converts shapes and holds no logic: each entry point checks its
// arguments, makes one call on the C++ player, and turns the result into a status plus the
// thread's last error (fourdgs_c_internal.hpp). Compiled WITH exceptions, every entry point
// inside guarded().
#include <fourdgs/fourdgs.h>

#include "fourdgs_c_internal.hpp"

#include <fourdgs/player.hpp>

#include <optional>
#include <string>

using namespace fourdgs;
using namespace fourdgs::capi;

struct fourdgs_player {
    explicit fourdgs_player(const Allocator& a) : alloc(a) {}
    Allocator alloc;
    std::optional<Player> player;
    PlayerFrame last;  // the last frame's description (its audio states)
};

namespace {

fourdgs_player_options default_player_options() noexcept {
    const PlayerOptions d;
    fourdgs_player_options o{};
    o.struct_size = sizeof o;
    o.look_ahead = d.look_ahead;
    o.start = d.start;
    o.rate = d.rate;
    o.loop = d.loop;
    o.playing = d.playing;
    o.max_sh_degree = static_cast<uint32_t>(d.max_sh_degree);
    o.apply_object_tracks = d.object_tracks;
    o.decode_threads = d.decode_threads;
    o.prefetch = d.prefetch;
    o.prefetch_step_sec = d.prefetch_options.step_sec;
    o.prefetch_horizon = d.prefetch_options.horizon;
    o.prefetch_bytes = d.prefetch_options.byte_budget;
    o.stall_timeout_sec = d.stall_timeout_sec;
    return o;
}

PlayerOptions player_options(const fourdgs_player_options& o) {
    PlayerOptions p;
    p.look_ahead = o.look_ahead;
    p.start = o.start;
    p.rate = o.rate;
    p.loop = o.loop != 0;
    p.playing = o.playing != 0;
    // Out of range stays out of range (the player refuses it), rather than wrapping to a degree.
    p.max_sh_degree = o.max_sh_degree > 3 ? 4 : static_cast<int>(o.max_sh_degree);
    p.object_tracks = o.apply_object_tracks != 0;
    p.decode_threads = o.decode_threads;
    p.prefetch = o.prefetch != 0;
    p.prefetch_options.step_sec = o.prefetch_step_sec;
    p.prefetch_options.horizon = o.prefetch_horizon;
    p.prefetch_options.byte_budget = o.prefetch_bytes;
    p.stall_timeout_sec = o.stall_timeout_sec;
    return p;
}

fourdgs_player_frame_info frame_info_out(const PlayerFrame& f) noexcept {
    fourdgs_player_frame_info i{};
    i.time = f.time;
    i.shown = f.shown;
    i.late = f.late;
    i.reason = static_cast<uint32_t>(f.reason);
    i.state = static_cast<uint32_t>(f.state);
    i.state_t0 = f.state_t0;
    i.state_t1 = f.state_t1;
    i.audio_count = f.audio.size();
    i.changed_rows = f.changed.data();
    i.changed_count = f.changed.size();
    i.all_changed = f.all_changed;
    return i;
}

fourdgs_player_info player_info_out(const Player& p) {
    const PlayerStats st = p.stats();
    fourdgs_player_info i{};
    i.state = static_cast<uint32_t>(p.state());
    i.loop = p.loop();
    i.rate = p.rate();
    i.position = p.position();
    i.duration = p.duration();
    i.frames = st.frames;
    i.late_frames = st.late_frames;
    i.chunks_decoded = st.chunks_decoded;
    i.states_composed = st.states_composed;
    i.steps = st.steps;
    i.discarded = st.discarded;
    i.resident_bytes = st.resident_bytes;
    return i;
}

// One frame call; `show` is the C++ call (frame or frame_at).
template <class Show>
fourdgs_status frame_with(fourdgs_player* player, fourdgs_frame* frame,
                          fourdgs_player_frame_info* info, Show&& show) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(player);
        FOURDGS_C_REQUIRE(frame);
        if (info != nullptr)
            if (auto s = check_size(info); s != FOURDGS_OK) return s;
        ++frame->fills;  // FrameTracking (counted first: a fill may fail midway)
        FOURDGS_C_TRY(show(*player->player, frame->frame, player->last));
        if (info != nullptr) return put(info, frame_info_out(player->last));
        return FOURDGS_OK;
    });
}

}  // namespace

void fourdgs_player_options_init_sized(fourdgs_player_options* options, size_t struct_size) {
    init_sized(options, struct_size, default_player_options());
}

void(fourdgs_player_options_init)(fourdgs_player_options* options) {
    fourdgs_player_options_init_sized(options, FOURDGS_C_ABI1_SIZE(fourdgs_player_options, stall_timeout_sec));
}

fourdgs_status fourdgs_player_create(const fourdgs_reader* reader,
                                     const fourdgs_player_options* options,
                                     fourdgs_player** out) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(reader);
        FOURDGS_C_REQUIRE(out);
        fourdgs_player_options o = default_player_options();
        if (options != nullptr)
            if (auto s = read_in(options, o); s != FOURDGS_OK) return s;
        fourdgs_player* p = make_handle<fourdgs_player>(reader->alloc);
        std::unique_ptr<fourdgs_player, void (*)(fourdgs_player*)> guard(p, destroy_handle);
        // A stream's scene is advanced by the player (it pulls the stream's states): the one
        // case where playing changes the reader, as fourdgs.h says.
        fourdgs_reader& r = const_cast<fourdgs_reader&>(*reader);
        auto opened = Player::open(*r.opened, *r.source, player_options(o));
        FOURDGS_C_TRY(opened);
        p->player.emplace(std::move(opened).value());
        *out = guard.release();
        return FOURDGS_OK;
    });
}

void fourdgs_player_free(fourdgs_player* player) { destroy_handle(player); }

fourdgs_status fourdgs_player_frame(fourdgs_player* player, double now, uint32_t wait,
                                    fourdgs_frame* frame, fourdgs_player_frame_info* info) {
    return frame_with(player, frame, info, [&](Player& p, Frame& f, PlayerFrame& i) {
        return p.frame(now, f, i, wait != 0);
    });
}

fourdgs_status fourdgs_player_frame_at(fourdgs_player* player, double t, uint32_t wait,
                                       fourdgs_frame* frame, fourdgs_player_frame_info* info) {
    return frame_with(player, frame, info, [&](Player& p, Frame& f, PlayerFrame& i) {
        return p.frame_at(t, f, i, wait != 0);
    });
}

fourdgs_status fourdgs_player_audio_state(const fourdgs_player* player, size_t index,
                                          fourdgs_audio_state* out) {
    return get_from(
        player,
        [&](const fourdgs_player& p) { return element(p.last.audio, index, "audio source"); },
        audio_state_out, out);
}

fourdgs_status fourdgs_player_play(fourdgs_player* player) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(player);
        player->player->play();
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_player_pause(fourdgs_player* player) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(player);
        player->player->pause();
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_player_seek(fourdgs_player* player, double t) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(player);
        if (auto s = finite_time(t); s != FOURDGS_OK) return s;
        player->player->seek(t);
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_player_set_rate(fourdgs_player* player, double rate) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(player);
        FOURDGS_C_TRY(player->player->set_rate(rate));
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_player_set_loop(fourdgs_player* player, uint32_t loop) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(player);
        player->player->set_loop(loop != 0);
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_player_info_get(const fourdgs_player* player, fourdgs_player_info* out) {
    return get_from(player, [](const fourdgs_player& p) { return &*p.player; }, player_info_out,
                    out);
}
