// zlib for the PNG encoder. deflateInit2 is a macro; typed wrappers import.
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
#endif
