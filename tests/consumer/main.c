/* Reads a .4dgs file through the installed C API and prints its summary. */
#include <fourdgs/fourdgs.h>

#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
    if (argc < 2) return 2;
    fourdgs_reader* reader = NULL;
    if (fourdgs_reader_open_file(argv[1], strlen(argv[1]), NULL, &reader) != FOURDGS_OK) {
        fourdgs_error e;
        memset(&e, 0, sizeof e);
        e.struct_size = sizeof e;
        fourdgs_last_error(&e);
        fprintf(stderr, "%.*s: %.*s\n", (int)e.refusal.size, e.refusal.data, (int)e.message.size,
                e.message.data);
        return 1;
    }
    fourdgs_scene_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    fourdgs_frame* frame = NULL;
    size_t visible = 0;
    int ok = fourdgs_reader_scene_info(reader, &info) == FOURDGS_OK &&
             fourdgs_frame_create(NULL, &frame) == FOURDGS_OK &&
             fourdgs_reader_evaluate(reader, info.duration_sec / 2, NULL, frame) == FOURDGS_OK &&
             fourdgs_frame_count(frame, &visible) == FOURDGS_OK;
    printf("%llu gaussians, %zu visible at %g s, fourdgs C ABI %s\n",
           (unsigned long long)info.gaussian_count, visible, info.duration_sec / 2,
           fourdgs_version());
    fourdgs_frame_free(frame);
    fourdgs_reader_free(reader);
    return ok && info.gaussian_count > 0 ? 0 : 1;
}
