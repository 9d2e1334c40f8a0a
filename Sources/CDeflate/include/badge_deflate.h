#ifndef BADGE_DEFLATE_H
#define BADGE_DEFLATE_H

#include <stddef.h>
#include <stdint.h>

/// The most bytes badge_deflate writes for `length` input bytes: a block
/// never costs more than storing it.
size_t badge_deflate_bound(size_t length);

/// Compresses data[history ..< history + length] as raw deflate blocks
/// (RFC 1951) that continue a stream whose last `history` bytes (at most the
/// 32 KB a decoder keeps) are data[0 ..< history]: matches may reach back into
/// them. A band that is not `last` ends on a byte boundary with an empty
/// stored block, as zlib's Z_SYNC_FLUSH does, so bands compressed apart join
/// into one stream; the `last` band ends the stream. Returns the bytes written
/// to `out`, or 0 when `capacity` is less than badge_deflate_bound(length).
/// `scratch` is badge_deflate_scratch_size() bytes of the caller's (its
/// contents do not matter): a caller compressing several bands reuses it, so
/// its pages are faulted in once.
size_t badge_deflate(const uint8_t *data, size_t history, size_t length, int last,
                     uint8_t *out, size_t capacity, void *scratch);

/// The bytes of scratch memory badge_deflate needs: ~400 KB.
size_t badge_deflate_scratch_size(void);

#endif
