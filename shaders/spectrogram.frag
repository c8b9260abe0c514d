#version 330 core
// Levels in dB come from the tile texture; the frequency axis (linear or log)
// is mapped per fragment, then floor, ceiling and gamma pick a colour from the
// colormap. Changing them uploads nothing. The texture is a pyramid over bins
// (app.tiles.bin_pyramid): level k's rows are the maxima of 2^k bins, so a pixel
// row spanning many bins reads three texels, and straight-line code (a loop of
// looks cost llvmpipe twice the frame time).
in float v_u;
out vec4 colour;

uniform sampler2D levels;     // R32F: dB, PYRAMID_ROWS rows: level 0 = bins from tile_bin0 up
uniform sampler2D colormap;   // 256 x 1 RGBA
uniform float tile_bin0;      // first bin of the tile
uniform float tile_bins;      // bins in the tile (level 0's rows)
uniform float bin_hz;         // STFT: Hz per bin
uniform int cq;               // 1: constant-Q bins (SlicedCQ.axis())
uniform float cq_f1;          // centre of bin 1 (bin 0 is the low-pass band at 0 Hz)
uniform float cq_bpo;         // bins per octave, from bin 1 ...
uniform float cq_log_top;     // ... to the last log-spaced bin
uniform float cq_f_log;       // its centre
uniform float cq_step;        // Hz between the linear bins above it, up to
uniform float cq_top;         // the last bin below Nyquist (then the Nyquist band)
uniform float cq_f_top;       // its centre
uniform float cq_nyquist;
uniform float view_bottom;    // framebuffer y (pixels from the bottom) of f_lo
uniform float view_height;    // pixels
uniform float f_lo;
uniform float f_hi;
uniform int log_freq;
uniform float floor_db;
uniform float ceiling_db;
uniform float gamma;
uniform int tinted;           // 1: levels are coded with the loudest layer (engine.model.layer_view)
uniform vec3 tints[8];        // each layer's colour (app.gui.view.tiles.TINT_COLOURS)

// the transform's fractional bin at hz (engine.transforms: bin_of)
float bin_of(float hz) {
    if (cq == 0) return hz / bin_hz;
    if (hz <= cq_f1) return hz / cq_f1;
    if (hz >= cq_f_top) return cq_top + (hz - cq_f_top) / (cq_nyquist - cq_f_top);
    if (hz >= cq_f_log) return cq_log_top + (hz - cq_f_log) / cq_step;
    return 1.0 + cq_bpo * log2(hz / cq_f1);
}

float hz_at(float y) {
    float unit = (y - view_bottom) / view_height;
    return log_freq == 1 ? f_lo * pow(f_hi / f_lo, unit) : mix(f_lo, f_hi, unit);
}

const float PYRAMID_ROWS = 512.0;  // app.tiles: 2 * TILE
const float TOP_LEVEL = 8.0;       // log2(TILE): one row, the whole tile's max

float level_row(float offset, float cell) {
    return texture(levels, vec2(v_u, (offset + cell + 0.5) / PYRAMID_ROWS)).r;
}

void main() {
    // the tile's rows this pixel row spans (row r covers [r, r + 1))
    float lo = bin_of(hz_at(gl_FragCoord.y - 0.5)) - tile_bin0 + 0.5;
    float hi = bin_of(hz_at(gl_FragCoord.y + 0.5)) - tile_bin0 + 0.5;
    float mid = 0.5 * (lo + hi);
    // under 2 bins a pixel: the bin at its middle; wider: the loudest of the cells of
    // the level whose cells are at most the span (three cover it), so a partial
    // narrower than a pixel is never skipped when zoomed out. The quad ends at the
    // tile's edges, so no pixel lies wholly outside it (no discard: it costs a branch).
    bool narrow = hi - lo < 2.0;
    float level = narrow ? 0.0 : min(floor(log2(hi - lo)), TOP_LEVEL);
    float size = exp2(level);
    float offset = PYRAMID_ROWS - PYRAMID_ROWS / size;  // the rows of the levels below
    float top = ceil(tile_bins / size) - 1.0;
    float first = clamp(floor((narrow ? mid : lo) / size), 0.0, top);
    float last = clamp(floor((narrow ? mid : hi) / size), 0.0, top);
    float db = max(max(level_row(offset, first), level_row(offset, min(first + 1.0, last))),
                   level_row(offset, last));
    int tint = 0;
    if (tinted == 1) {  // floor(dB * 16) * 16 + the layer's tint
        float code = max(db, -1.0e7);
        float k = mod(code, 16.0);
        tint = int(k);
        db = (code - k) / 256.0;
    }
    float shade = clamp((db - floor_db) / (ceiling_db - floor_db), 0.0, 1.0);
    colour = tinted == 1 ? vec4(tints[min(tint, 7)] * pow(shade, gamma), 1.0)
                         : texture(colormap, vec2((pow(shade, gamma) * 255.0 + 0.5) / 256.0, 0.5));
}
