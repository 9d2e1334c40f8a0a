// libraqm (HarfBuzz shaping, FriBidi bidirectional order, script itemisation),
// opened on first use like libgd (CLazyLibrary says why): only a caption in a
// script that needs shaping (Arabic, Hebrew, Devanagari, CJK...) loads it, so
// `badge --help` and a Latin badge never pay for HarfBuzz and GLib. badge_raqm_load()
// opens it; each function is badge_<raqm's name>, forwarding to raqm's.
#ifndef BADGE_CRAQM_SHIM_H
#define BADGE_CRAQM_SHIM_H

#include <raqm.h>
#include <stddef.h>

#include "badge_lazy_library.h"

// Each entry: return type, name, parameters, arguments.
#define BADGE_RAQM_FUNCTIONS(RETURNING, VOID, OPTIONAL)                                                         \
    RETURNING(raqm_t *, raqm_create, (void), ())                                                                \
    VOID(raqm_destroy, (raqm_t * rq), (rq))                                                                     \
    RETURNING(bool, raqm_set_text_utf8, (raqm_t * rq, const char *text, size_t len), (rq, text, len))           \
    RETURNING(bool, raqm_set_par_direction, (raqm_t * rq, raqm_direction_t dir), (rq, dir))                     \
    RETURNING(bool, raqm_set_language, (raqm_t * rq, const char *lang, size_t start, size_t len),               \
              (rq, lang, start, len))                                                                           \
    RETURNING(bool, raqm_set_freetype_face_range, (raqm_t * rq, FT_Face face, size_t start, size_t len),        \
              (rq, face, start, len))                                                                           \
    RETURNING(bool, raqm_set_freetype_load_flags, (raqm_t * rq, int flags), (rq, flags))                        \
    RETURNING(bool, raqm_layout, (raqm_t * rq), (rq))                                                           \
    RETURNING(raqm_glyph_t *, raqm_get_glyphs, (raqm_t * rq, size_t *length), (rq, length))

// Opens libraqm (BADGE_SONAME_RAQM), once. 0 when loaded; otherwise -1 and the reason in
// `message` (up to `capacity` bytes).
int badge_raqm_load(char *message, size_t capacity);

BADGE_RAQM_FUNCTIONS(BADGE_LAZY_DECLARE, BADGE_LAZY_DECLARE_VOID, BADGE_LAZY_DECLARE)

#endif
