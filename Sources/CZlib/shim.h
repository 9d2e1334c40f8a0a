// zlib for the PNG encoder and for checking every PNG badge writes.
// deflateInit2 and inflateInit are macros; typed wrappers import.
#ifndef BADGE_CZLIB_SHIM_H
#define BADGE_CZLIB_SHIM_H
#include <zlib.h>

static inline int badge_deflate_init(z_stream *stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, 15, 8, Z_DEFAULT_STRATEGY);
}

// A raw deflate stream (no zlib header or checksum): the encoder compresses
// bands of rows separately and joins them into one zlib stream itself.
static inline int badge_deflate_init_raw(z_stream *stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
}

// A zlib stream (header and Adler-32 checked), as a PNG's image data is.
static inline int badge_inflate_init(z_stream *stream) { return inflateInit(stream); }

// Raw deflate, for checking one of the encoder's bands on its own.
static inline int badge_inflate_init_raw(z_stream *stream) { return inflateInit2(stream, -15); }
#endif
