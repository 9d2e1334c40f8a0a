// Differential fuzzing of badge's deflate (Sources/CDeflate) against zlib:
// every input is compressed by badge_deflate, in one band or several joined
// as PNGEncoder joins them, inflated by zlib, and compared byte for byte; its
// Adler-32 is compared with zlib's too. Any difference aborts, and libFuzzer
// saves the input. Run by scripts/fuzz.sh (make fuzz; FUZZ_TARGETS=deflate alone).
//
// The first byte of an input chooses how it is used: its low bit, the bytes
// as they are (random rows) or as a recipe for rows like a badge's (a filter
// byte, then runs of a colour, repeats of the row above, noise); the next two
// bits, how many bands (1 to 4); bit 3, for a recipe, whether its rows are
// small (up to 64 pixels, 128 rows: ~33 KB) or a badge's size (up to 1024
// pixels and 1024 rows, cut at 512 KB), which reaches the encoder's block
// split at 256 KB of input. Fuzz/corpus-deflate has seeds for both modes
// (Fuzz/make-deflate-seeds.py writes them).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "badge_deflate.h"

enum { MAX_STRUCTURED = 1 << 19 };

static size_t structured(const uint8_t *recipe, size_t size, int large, uint8_t *out) {
    size_t stride, rows, n = 0, at;  // stride: bytes of pixels in a row
    if (large) {
        if (size < 4) return 0;
        stride = 4 * (1 + (recipe[0] | (size_t)recipe[1] << 8) % 1024);
        rows = 1 + (recipe[2] | (size_t)recipe[3] << 8) % 1024;
        at = 4;
    } else {
        if (size < 2) return 0;
        stride = 4 * (1 + recipe[0] % 64);
        rows = 1 + recipe[1] % 128;
        at = 2;
    }
    for (size_t row = 0; row < rows && n + stride + 1 <= MAX_STRUCTURED; row++) {
        uint8_t op = at < size ? recipe[at++] : 0;
        out[n++] = op % 5;  // the filter type
        for (size_t x = 0; x < stride; x++) {
            uint8_t arg = at < size ? recipe[at] : (uint8_t)x;
            switch (op / 5 % 4) {
            case 0: out[n] = (uint8_t)(arg + x % 4); break;                       // one colour
            case 1: out[n] = row > 0 ? out[n - stride - 1] : arg; break;          // the row above
            case 2: out[n] = at < size ? recipe[at++] : 0; break;                 // noise from the input
            default: out[n] = (uint8_t)((x / (1 + arg % 16)) * 37 + x % 4); break; // short runs
            }
            n++;
        }
        if (at < size && op >= 20) at++;
    }
    return n;
}

static void check(const uint8_t *data, size_t size, int bands) {
    size_t bound = 0;
    size_t band = size / (size_t)bands + 1;
    for (size_t start = 0; start < size || start == 0; start += band) {
        size_t length = size - start < band ? size - start : band;
        bound += badge_deflate_bound(length);
        if (start + length >= size) break;
    }
    uint8_t *compressed = malloc(bound + 16);
    void *scratch = malloc(badge_deflate_scratch_size());
    size_t used = 0;
    for (size_t start = 0;; start += band) {
        size_t length = size - start < band ? size - start : band;
        size_t history = start < 32768 ? start : 32768;
        int last = start + length >= size;
        size_t wrote = badge_deflate(data + start - history, history, length, last, compressed + used, bound + 16 - used, scratch);
        if (wrote == 0) {
            fprintf(stderr, "badge_deflate wrote nothing for a band of %zu bytes\n", length);
            abort();
        }
        used += wrote;
        if (last) break;
    }

    uint8_t *inflated = malloc(size + 1);
    z_stream stream;
    memset(&stream, 0, sizeof(stream));
    if (inflateInit2(&stream, -15) != Z_OK) abort();
    stream.next_in = compressed;
    stream.avail_in = (uInt)used;
    stream.next_out = inflated;
    stream.avail_out = (uInt)(size + 1);
    int status = inflate(&stream, Z_FINISH);
    if (status != Z_STREAM_END) {
        fprintf(stderr, "zlib refused badge_deflate's stream (%d bands, %zu bytes in): %s\n", bands, size,
                stream.msg ? stream.msg : "no message");
        abort();
    }
    if (stream.total_out != size || memcmp(inflated, data, size) != 0 || stream.avail_in != 0) {
        fprintf(stderr, "badge_deflate's stream inflates to other bytes (%lu of %zu, %u left over)\n",
                stream.total_out, size, stream.avail_in);
        abort();
    }
    inflateEnd(&stream);
    free(inflated);
    free(scratch);
    free(compressed);
}

int LLVMFuzzerTestOneInput(const uint8_t *input, size_t size) {
    if (size == 0) return 0;
    int bands = 1 + (input[0] >> 1) % 4;
    if (input[0] & 1) {
        static uint8_t rows[MAX_STRUCTURED];
        size_t n = structured(input + 1, size - 1, input[0] & 8, rows);
        check(rows, n, bands);
    } else {
        check(input + 1, size - 1, bands);
    }
    return 0;
}
