// zlib for the PNG encoder. deflateInit2 is a macro; a typed wrapper imports.
#ifndef BADGE_CZLIB_SHIM_H
#define BADGE_CZLIB_SHIM_H
#include <zlib.h>

static inline int badge_deflate_init(z_stream *stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, 15, 8, Z_DEFAULT_STRATEGY);
}
#endif
