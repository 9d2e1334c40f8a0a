// FreeType's functions, as badge calls them, forwarded to libfreetype.so.6
// opened on first use (see library_loader.h): linked, fontconfig and FreeType
// and the libraries they bring (expat, libpng, brotli) were loaded and
// relocated before `main` on every run, `badge --help` included, while the
// commands that draw a caption now open them on a spare thread (Prewarm) as
// the arguments are parsed. Each entry: return type, name, parameters, arguments.
#include "library_loader.h"

#include <ft2build.h>
#include FT_FREETYPE_H
#include <pthread.h>

#define BADGE_FREETYPE_FUNCTIONS(RETURNING, VOID)                                                                    \
    RETURNING(FT_Error, FT_Init_FreeType, (FT_Library * alibrary), (alibrary))                                      \
    RETURNING(FT_Error, FT_Done_FreeType, (FT_Library library), (library))                                          \
    RETURNING(FT_Error, FT_New_Face, (FT_Library library, const char *path, FT_Long index, FT_Face *aface),         \
              (library, path, index, aface))                                                                        \
    RETURNING(FT_Error, FT_Done_Face, (FT_Face face), (face))                                                       \
    RETURNING(FT_Error, FT_Set_Char_Size,                                                                           \
              (FT_Face face, FT_F26Dot6 width, FT_F26Dot6 height, FT_UInt horizontal, FT_UInt vertical),            \
              (face, width, height, horizontal, vertical))                                                          \
    RETURNING(FT_UInt, FT_Get_Char_Index, (FT_Face face, FT_ULong charcode), (face, charcode))                      \
    RETURNING(FT_Error, FT_Load_Glyph, (FT_Face face, FT_UInt glyph, FT_Int32 flags), (face, glyph, flags))         \
    RETURNING(FT_Error, FT_Render_Glyph, (FT_GlyphSlot slot, FT_Render_Mode mode), (slot, mode))                    \
    RETURNING(FT_Error, FT_Get_Kerning, (FT_Face face, FT_UInt left, FT_UInt right, FT_UInt mode, FT_Vector *kerning), \
              (face, left, right, mode, kerning))

#define BADGE_SONAME "libfreetype.so.6"
#define BADGE_PACKAGE "libfreetype6"
BADGE_LIBRARY(BADGE_FREETYPE_FUNCTIONS)
