// fourdgs/three's packing helper (js/src/spark-pack.js): Spark's 16-byte splat words for a
// frame's rows, as Spark's setPackedSplat writes them, bit for bit. A module of its own
// (fourdgs-spark-pack.wasm), loaded only by the three.js adapter: the core module does not grow.
//
// Each step is Spark's formula in double precision, as JavaScript computes it (IEEE sqrt,
// division and products are exact the same way in both). What Spark computes through a
// function of one number comes from tables the JavaScript side builds once from Spark's own
// encoders: a scale's, a colour channel's and an opacity's 8-bit code over the f32's bits, and
// the rotation's angle code over the normalized w (in place of Math.acos). The centres' half
// floats come converted (the browser's Float16Array, Spark's own conversion there). A row's
// rotation, scale and colour codes are kept with the bits they were made from and made again only
// for bits the previous frame did not have (spark_pack).
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

// A row's codes, kept with the bits they were made from (the frame's columns, which the caller
// keeps from one frame to the next): what of Spark's 16-byte word does not move within a state.
// rgb: word 0's colour bytes; oct_uv: word 2's rotation bytes (u, v, high 16 bits); scales:
// word 3 (the three scale bytes and the rotation's angle byte).
typedef struct {
    uint32_t rgb, oct_uv, scales;
} Codes;

// A frame's columns as the packing reads them: the f32s' bits.
typedef struct {
    const uint32_t* scale;     // 3 a row
    const uint32_t* colour;    // 4 a row (r, g, b, opacity)
    const uint32_t* rotation;  // 4 a row (x, y, z, w)
} Columns;

// Whether new row i and old row j have the same rotation, scale and colour bits (the opacity may
// differ): then their codes are the same.
static inline int same_row(const Columns* a, uint32_t i, const Columns* b, uint32_t j) {
    const uint32_t *ra = a->rotation + 4 * i, *rb = b->rotation + 4 * j;
    const uint32_t *sa = a->scale + 3 * i, *sb = b->scale + 3 * j;
    const uint32_t *ca = a->colour + 4 * i, *cb = b->colour + 4 * j;
    return ra[0] == rb[0] && ra[1] == rb[1] && ra[2] == rb[2] && ra[3] == rb[3] && sa[0] == sb[0] &&
           sa[1] == sb[1] && sa[2] == sb[2] && ca[0] == cb[0] && ca[1] == cb[1] && ca[2] == cb[2];
}

static inline uint32_t three_codes(const CodeTable* t, const uint32_t* bits) {
    return code_of(t, bits[0]) | code_of(t, bits[1]) << 8 | code_of(t, bits[2]) << 16;
}

// Row i's codes with its rotation code `oct` (Spark's angle << 16 | v << 8 | u).
static inline Codes codes_of(const Columns* c, uint32_t i, uint32_t oct,
                             const CodeTable* scale_table, const CodeTable* colour_table) {
    const Codes k = {three_codes(colour_table, c->colour + 4 * i), (oct & 0xffff) << 16,
                     three_codes(scale_table, c->scale + 3 * i) | (oct >> 16) << 24};
    return k;
}

// Spark's word of row i from its codes, its opacity and its centre's half floats.
static inline void write_row(uint32_t* restrict out, uint32_t i, Codes k, uint32_t opacity,
                             const uint16_t* halves) {
    out[4 * i] = k.rgb | opacity << 24;
    out[4 * i + 1] = (uint32_t)halves[3 * i] | (uint32_t)halves[3 * i + 1] << 16;
    out[4 * i + 2] = (uint32_t)halves[3 * i + 2] | k.oct_uv;
    out[4 * i + 3] = k.scales;
}

// Rows before this many are merged before deciding that the frames share too few to go on.
#define MERGE_PROBE 256
// Old rows skipped at most to find a new row's match (gaussians gone between the two frames).
#define MERGE_LOOKAHEAD 8

// Each new row's codes from the old row with the same bits, where the two frames share their
// rows in the same order with some gone and some new (within a state: gaussians crossing the
// cut-off shift the rows; the others keep their rotation, scale and colour): a merge of the two
// frames, skipping up to MERGE_LOOKAHEAD old rows to find a match. The rows it finds none for
// are listed in `missing`; returns how many, or n + 1 when most of the first MERGE_PROBE rows
// had none (another state: every row is made again).
static uint32_t merge_codes(uint32_t n, const Columns* now, uint32_t m, const Columns* before,
                            const Codes* restrict old_codes, Codes* restrict codes,
                            uint32_t* restrict missing) {
    uint32_t j = 0, misses = 0;
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t found = m;
        for (uint32_t d = 0; d <= MERGE_LOOKAHEAD && j + d < m; ++d) {
            if (same_row(now, i, before, j + d)) {
                found = j + d;
                break;
            }
        }
        if (found < m) {
            codes[i] = old_codes[found];
            j = found + 1;
        } else {
            missing[misses++] = i;
            if (i + 1 == MERGE_PROBE && 2 * misses > MERGE_PROBE) return n + 1;
        }
    }
    return misses;
}

// The codes of rows list[0, count) (list null: of rows [0, count)) made anew: their rotations in
// one loop without branches on the rows, which the compiler vectorizes, over the rows'
// quaternions gathered side by side (`gathered`: 4 a row), into `oct`; then the table lookups.
static void make_codes(uint32_t count, const uint32_t* list, const Columns* now,
                       Codes* restrict codes, float* restrict gathered, uint32_t* restrict oct,
                       const CodeTable* scale_table, const CodeTable* colour_table,
                       const uint8_t* restrict angle_low, const double* restrict angle_drop) {
    const float* q = (const float*)now->rotation;
    if (list) {
        for (uint32_t k = 0; k < count; ++k)
            for (uint32_t c = 0; c < 4; ++c) gathered[4 * k + c] = q[4 * list[k] + c];
        q = gathered;
    }
    for (uint32_t k = 0; k < count; ++k)
        oct[k] = octahedral(q[4 * k], q[4 * k + 1], q[4 * k + 2], q[4 * k + 3], angle_low,
                            angle_drop);
    for (uint32_t k = 0; k < count; ++k) {
        const uint32_t i = list ? list[k] : k;
        codes[i] = codes_of(now, i, oct[k], scale_table, colour_table);
    }
}

// A frame's rows into Spark's words `out` (4 a row). `now` is this frame's columns, `before` the
// previous frame's (m rows, 0 for none), whose codes are `old_codes`.
//   - rows null: every row; each row's codes (into `codes`) from the previous frame's row with
//     the same bits (merge_codes), else made anew.
//   - rows[0, count): only those rows, the others as the previous frame left them (the same
//     rows in the same order: n == m, and codes == old_codes, updated in place).
// Only a row's opacity and centre are packed every frame; its rotation, scale and colour codes
// only when their bits are new. `missing`, `oct`: n words, `gathered`: 4n. Returns how many
// rows' codes were made anew.
__attribute__((used, visibility("default")))
uint32_t spark_pack(uint32_t n, const uint32_t* rows, uint32_t count, const uint16_t* halves,
                    const uint32_t* scale, const uint32_t* colour, const uint32_t* rotation,
                    uint32_t m, const uint32_t* old_scale, const uint32_t* old_colour,
                    const uint32_t* old_rotation, const Codes* old_codes, Codes* codes,
                    uint32_t* missing, float* gathered, uint32_t* oct, uint32_t* out,
                    const CodeTable* scale_table, const CodeTable* colour_table,
                    const CodeTable* opacity_table, const uint8_t* angle_low,
                    const double* angle_drop) {
    const Columns now = {scale, colour, rotation}, before = {old_scale, old_colour, old_rotation};
    uint32_t misses = 0;
    if (rows) {
        for (uint32_t k = 0; k < count; ++k)
            if (!same_row(&now, rows[k], &before, rows[k])) missing[misses++] = rows[k];
    } else {
        misses = merge_codes(n, &now, m, &before, old_codes, codes, missing);
    }
    const int every_row = misses > n;
    make_codes(every_row ? n : misses, every_row ? 0 : missing, &now, codes, gathered, oct,
               scale_table, colour_table, angle_low, angle_drop);
    const uint32_t total = rows ? count : n;
    for (uint32_t k = 0; k < total; ++k) {
        const uint32_t i = rows ? rows[k] : k;
        write_row(out, i, codes[i], code_of(opacity_table, colour[4 * i + 3]), halves);
    }
    return every_row ? n : misses;
}
