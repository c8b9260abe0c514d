#version 330 core
// Levels in dB come from the tile texture (one bin per row); the frequency
// axis (linear or log) is mapped per fragment, then floor, ceiling and gamma
// pick a colour from the colormap. Changing them uploads nothing.
in float v_u;
out vec4 colour;

uniform sampler2D levels;     // R32F: dB, rows = bins from tile_bin0 up
uniform sampler2D colormap;   // 256 x 1 RGBA
uniform float tile_bin0;      // first bin of the tile
uniform float tile_bins;      // rows in the tile
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

void main() {
    // the bins this pixel row spans: the loudest of them (up to 32 looks), so a
    // partial narrower than a pixel is never skipped when zoomed out
    float b0 = bin_of(hz_at(gl_FragCoord.y - 0.5));
    float b1 = bin_of(hz_at(gl_FragCoord.y + 0.5));
    int looks = clamp(int(b1 - b0), 1, 32);  // one look while a pixel spans under 2 bins
    float db = -1.0e30;
    for (int i = 0; i < looks; i++) {
        float b = mix(b0, b1, (float(i) + 0.5) / float(looks));
        float v = (b - tile_bin0 + 0.5) / tile_bins;
        if (v >= 0.0 && v <= 1.0) db = max(db, texture(levels, vec2(v_u, v)).r);
    }
    if (db < -1.0e29) discard;
    float level = clamp((db - floor_db) / (ceiling_db - floor_db), 0.0, 1.0);
    colour = texture(colormap, vec2((pow(level, gamma) * 255.0 + 0.5) / 256.0, 0.5));
}
