// fourdgs/three's packing helper (js/src/spark-pack.js): Spark's 16-byte splat words for a
// frame's rows, as Spark's setPackedSplat writes them, bit for bit. A module of its own
// (fourdgs-spark-pack.wasm), loaded only by the three.js adapter: the core module does not grow.
//
// Each step is Spark's formula in double precision, as JavaScript computes it (IEEE sqrt,
// division and products are exact the same way in both). What Spark computes through a
// function of one number comes from tables the JavaScript side builds once from Spark's own
// encoders: a scale's, a colour channel's and an opacity's 8-bit code over the f32's bits, and
// the rotation's angle code over the normalized w (in place of Math.acos). The centres' half
// floats come converted (the browser's Float16Array, Spark's own conversion there).
#include <math.h>
#include <stdint.h>

// A code table over an f32's bits (js/src/spark-pack.js, codeTable): entry bits >> shift holds
// the code of the bin's lowest bits (8 bits), its step plus one (2 bits: 0 down, 1 none, 2 up)
// and the offset in the bin from which the step applies (20 bits).
typedef struct {
    const uint32_t* entries;
    uint32_t shift;
} CodeTable;

static inline uint32_t code_of(const CodeTable* t, uint32_t bits) {
    const uint32_t e = t->entries[bits >> t->shift], offset = bits & ((1u << t->shift) - 1);
    const int32_t step = (int32_t)(e >> 8 & 3) - 1;
    return (uint32_t)((int32_t)(e & 255) + (offset >= (e >> 10) ? step : 0));
}

// JavaScript's Math.round for the values here (0 ≤ v < 2^31): floor, then up from a half.
static inline uint32_t js_round(double v) {
    const double r = floor(v);
    return (uint32_t)(v - r >= 0.5 ? r + 1 : r);
}

#define ANGLE_BINS 65536

// Spark's encodeQuatOctXy88R8 (its THREE.Quaternion normalize, divideScalar): angle << 16 |
// v << 8 | u, the angle from the table over w (angle_low, angle_drop: see spark-pack.js).
static inline __attribute__((always_inline)) uint32_t octahedral(double x, double y, double z, double w, const uint8_t* angle_low,
                           const double* angle_drop) {
    double l = sqrt(x * x + y * y + z * z + w * w);
    if (l == 0) {
        x = 0, y = 0, z = 0, w = 1;
    } else {
        l = 1 / l;
        x *= l, y *= l, z *= l, w *= l;
    }
    if (w < 0) x = -x, y = -y, z = -z, w = -w;
    const int32_t bin = (int32_t)(w * ANGLE_BINS);
    const uint32_t angle = angle_low[bin] - (w >= angle_drop[bin] ? 1u : 0u);
    const double norm = sqrt(x * x + y * y + z * z);
    double ax = 1, ay = 0, az = 0;
    if (norm >= 1e-6) {
        const double r = 1 / norm;
        ax = x * r, ay = y * r, az = z * r;
    }
    const double sum = fabs(ax) + fabs(ay) + fabs(az);
    double px = ax / sum, py = ay / sum;
    if (az < 0) {
        const double t = px;
        px = (1 - fabs(py)) * (px >= 0 ? 1 : -1);
        py = (1 - fabs(t)) * (py >= 0 ? 1 : -1);
    }
    return angle << 16 | js_round((py * 0.5 + 0.5) * 255) << 8 | js_round((px * 0.5 + 0.5) * 255);
}

static inline int rotation_differs(const uint32_t* kept_bits, const uint32_t* bits, uint32_t i4) {
    return kept_bits[i4] != bits[i4] || kept_bits[i4 + 1] != bits[i4 + 1] ||
           kept_bits[i4 + 2] != bits[i4 + 2] || kept_bits[i4 + 3] != bits[i4 + 3];
}

// Each row's rotation code (kept_code) with the bits it was made from (kept_bits), made again
// for the rows whose bits differ. When most rows of a whole frame differ (a new state), every
// row is encoded in one loop without branches on the rows, which the compiler vectorizes.
static void update_rotations(uint32_t n, const uint32_t* rows, uint32_t count,
                             const float* restrict rotation, uint32_t* restrict kept_bits,
                             uint32_t* restrict kept_code, const uint8_t* restrict angle_low,
                             const double* restrict angle_drop) {
    const uint32_t* bits = (const uint32_t*)rotation;
    if (!rows) {
        uint32_t differing = 0;
        for (uint32_t i = 0; i < n; ++i) differing += (uint32_t)rotation_differs(kept_bits, bits, 4 * i);
        if (2 * differing > n) {
            for (uint32_t i = 0; i < 4 * n; ++i) kept_bits[i] = bits[i];
            for (uint32_t i = 0; i < n; ++i)
                kept_code[i] = octahedral(rotation[4 * i], rotation[4 * i + 1], rotation[4 * i + 2],
                                          rotation[4 * i + 3], angle_low, angle_drop);
            return;
        }
    }
    const uint32_t total = rows ? count : n;
    for (uint32_t k = 0; k < total; ++k) {
        const uint32_t i = rows ? rows[k] : k, i4 = 4 * i;
        if (!rotation_differs(kept_bits, bits, i4)) continue;
        for (int j = 0; j < 4; ++j) kept_bits[i4 + j] = bits[i4 + j];
        kept_code[i] = octahedral(rotation[i4], rotation[i4 + 1], rotation[i4 + 2], rotation[i4 + 3],
                                  angle_low, angle_drop);
    }
}

// Whether the three words at `bits` are those `kept` holds; when not, `kept` takes them.
static inline int same3(uint32_t* restrict kept, const uint32_t* restrict bits) {
    if (kept[0] == bits[0] && kept[1] == bits[1] && kept[2] == bits[2]) return 1;
    kept[0] = bits[0], kept[1] = bits[1], kept[2] = bits[2];
    return 0;
}

// Rows [0, n) (rows null) or rows[0, count) of the frame into out (4 words a row). The scale's
// and the colour's codes are looked up again only when the row's bits differ from those they
// were made from (kept_scale, kept_rgb: within a state only a gaussian's centre and opacity
// move); the rotation's as update_rotations says.
__attribute__((used, visibility("default")))
void spark_pack(uint32_t n, const uint32_t* rows, uint32_t count, const uint16_t* halves,
                const uint32_t* scale, const uint32_t* colour, const float* rotation,
                uint32_t* kept_bits, uint32_t* kept_code, uint32_t* kept_scale, uint32_t* kept_rgb,
                uint32_t* out, const CodeTable* scale_table, const CodeTable* colour_table,
                const CodeTable* opacity_table, const uint8_t* angle_low,
                const double* angle_drop) {
    update_rotations(n, rows, count, rotation, kept_bits, kept_code, angle_low, angle_drop);
    const uint32_t total = rows ? count : n;
    for (uint32_t k = 0; k < total; ++k) {
        const uint32_t i = rows ? rows[k] : k, i3 = 3 * i, i4 = 4 * i, oct = kept_code[i];
        const uint32_t rgb = same3(kept_rgb + i3, colour + i4) ? out[i4] & 0xffffff
            : code_of(colour_table, colour[i4]) | code_of(colour_table, colour[i4 + 1]) << 8 |
              code_of(colour_table, colour[i4 + 2]) << 16;
        const uint32_t scales = same3(kept_scale + i3, scale + i3) ? out[i4 + 3] & 0xffffff
            : code_of(scale_table, scale[i3]) | code_of(scale_table, scale[i3 + 1]) << 8 |
              code_of(scale_table, scale[i3 + 2]) << 16;
        out[i4] = rgb | code_of(opacity_table, colour[i4 + 3]) << 24;
        out[i4 + 1] = (uint32_t)halves[i3] | (uint32_t)halves[i3 + 1] << 16;
        out[i4 + 2] = (uint32_t)halves[i3 + 2] | (oct & 255) << 16 | (oct >> 8 & 255) << 24;
        out[i4 + 3] = scales | (oct >> 16 & 255) << 24;
    }
}

// The rotation code of the all-zero bits a new row's kept_bits start with.
__attribute__((used, visibility("default")))
uint32_t spark_zero_rotation(const uint8_t* angle_low, const double* angle_drop) {
    return octahedral(0, 0, 0, 0, angle_low, angle_drop);
}
