// FreeType and fontconfig, for captions: a few kilobytes of libraries where
// libgd's text path would load libgd's whole dependency tree.
#ifndef BADGE_CFREETYPE_SHIM_H
#define BADGE_CFREETYPE_SHIM_H

#include <ft2build.h>
#include FT_FREETYPE_H
#include <fontconfig/fontconfig.h>

static inline int badge_ft_has_kerning(FT_Face face) { return FT_HAS_KERNING(face) ? 1 : 0; }

#endif
