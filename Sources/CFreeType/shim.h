// FreeType, for captions: a few kilobytes of library where libgd's text path
// would load libgd's whole dependency tree.
#ifndef BADGE_CFREETYPE_SHIM_H
#define BADGE_CFREETYPE_SHIM_H

#include <ft2build.h>
#include FT_FREETYPE_H
#include FT_OUTLINE_H

static inline int badge_ft_has_kerning(FT_Face face) { return FT_HAS_KERNING(face) ? 1 : 0; }

#endif
