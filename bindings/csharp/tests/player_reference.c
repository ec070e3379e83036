/* The reference playback loop for the C# binding's player test: plays FILE through the C
 * player on a fixed clock and prints one line per frame. The C# test (PlayerTests.cs) drives
 * its Player with the same options and the same clock times and must print the same lines.
 *
 * Options: playing from the start, looping, rate 1.25, max_sh_degree 3, everything else the
 * library's default. Clock: now = 1000 + k * 0.07 for k in 0..FRAMES-1, each frame waited for
 * (wait = 1, so no frame is late and the output does not depend on timing); after frame 40 a
 * seek to 0.3 * duration, after frame 60 the rate becomes -0.5 (backward).
 *
 * Line: k time shown late state count unrepresentable fnv, time and shown as the hex of their
 * IEEE-754 bits (exact, no decimal formatting to agree on), fnv FNV-1a 64 over the
 * frame's columns in order (center, scale, rotation, color as float bytes, object_id as uint32
 * bytes, sh bytes, flags bytes), all little-endian as they lie in memory. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fourdgs/fourdgs.h>

#define FRAMES 80

static uint64_t fnv(uint64_t h, const void* data, size_t size) {
    const unsigned char* p = (const unsigned char*)data;
    for (size_t i = 0; i < size; ++i) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static uint64_t bits(double d) {
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

static int fail(const char* what) {
    fourdgs_error e;
    memset(&e, 0, sizeof e);
    e.struct_size = sizeof e;
    fourdgs_last_error(&e);
    fprintf(stderr, "%s: %s: %s\n", what, e.refusal.data, e.message.data);
    return 1;
}

int main(int argc, char** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s FILE\n", argv[0]);
        return 2;
    }
    fourdgs_reader* reader = NULL;
    if (fourdgs_reader_open_file(argv[1], strlen(argv[1]), NULL, &reader) != FOURDGS_OK)
        return fail("open");
    fourdgs_scene_info scene;
    memset(&scene, 0, sizeof scene);
    scene.struct_size = sizeof scene;
    if (fourdgs_reader_scene_info(reader, &scene) != FOURDGS_OK) return fail("scene_info");
    fourdgs_player_options o;
    fourdgs_player_options_init(&o);
    o.playing = 1;
    o.loop = 1;
    o.rate = 1.25;
    o.max_sh_degree = 3;
    fourdgs_player* player = NULL;
    fourdgs_frame* frame = NULL;
    if (fourdgs_player_create(reader, &o, &player) != FOURDGS_OK) return fail("player_create");
    if (fourdgs_frame_create(NULL, &frame) != FOURDGS_OK) return fail("frame_create");
    for (int k = 0; k < FRAMES; ++k) {
        if (k == 40 && fourdgs_player_seek(player, 0.3 * scene.duration_sec) != FOURDGS_OK)
            return fail("seek");
        if (k == 60 && fourdgs_player_set_rate(player, -0.5) != FOURDGS_OK) return fail("rate");
        fourdgs_player_frame_info info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        if (fourdgs_player_frame(player, 1000 + k * 0.07, 1, frame, &info) != FOURDGS_OK)
            return fail("frame");
        fourdgs_frame_columns c;
        memset(&c, 0, sizeof c);
        c.struct_size = sizeof c;
        if (fourdgs_frame_columns_get(frame, &c) != FOURDGS_OK) return fail("columns");
        uint64_t h = 14695981039346656037ull;
        h = fnv(h, c.center, c.count * 3 * sizeof(float));
        h = fnv(h, c.scale, c.count * 3 * sizeof(float));
        h = fnv(h, c.rotation, c.count * 4 * sizeof(float));
        h = fnv(h, c.color, c.count * 4 * sizeof(float));
        h = fnv(h, c.object_id, c.count * sizeof(uint32_t));
        h = fnv(h, c.sh, c.count * c.sh_per_gaussian);
        h = fnv(h, c.flags, c.count);
        printf("%d %016" PRIx64 " %016" PRIx64 " %u %u %zu %zu %016" PRIx64 "\n", k, bits(info.time),
               bits(info.shown), info.late, info.state, c.count, c.unrepresentable, h);
    }
    fourdgs_frame_free(frame);
    fourdgs_player_free(player);
    fourdgs_reader_free(reader);
    return 0;
}
