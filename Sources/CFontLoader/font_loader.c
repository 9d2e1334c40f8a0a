// fontconfig's and FreeType's functions, as badge calls them, forwarded to
// the libraries once they are opened on first use (see library_loader.h):
// linked, they and the libraries they bring (expat, libpng, brotli) were
// loaded and relocated before `main` on every run, `badge --help` included,
// while the commands that draw a caption now open them on a spare thread
// (Prewarm) as the arguments are parsed.
// Each entry: return type, name, parameters, arguments.
#include "library_loader.h"

#include <ft2build.h>
#include FT_FREETYPE_H
#include <fontconfig/fontconfig.h>
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

#define BADGE_FONTCONFIG_FUNCTIONS(RETURNING, VOID)                                                                  \
    RETURNING(FcPattern *, FcNameParse, (const FcChar8 *name), (name))                                              \
    RETURNING(FcBool, FcConfigSubstitute, (FcConfig * config, FcPattern *pattern, FcMatchKind kind),                \
              (config, pattern, kind))                                                                              \
    VOID(FcDefaultSubstitute, (FcPattern * pattern), (pattern))                                                     \
    RETURNING(FcPattern *, FcFontMatch, (FcConfig * config, FcPattern *pattern, FcResult *result),                  \
              (config, pattern, result))                                                                            \
    RETURNING(FcResult, FcPatternGetString, (const FcPattern *pattern, const char *object, int n, FcChar8 **s),     \
              (pattern, object, n, s))                                                                              \
    VOID(FcPatternDestroy, (FcPattern * pattern), (pattern))                                                        \
    RETURNING(int, FcGetVersion, (void), ())                                                                        \
    RETURNING(FcStrList *, FcConfigGetConfigFiles, (FcConfig * config), (config))                                   \
    RETURNING(FcStrList *, FcConfigGetFontDirs, (FcConfig * config), (config))                                      \
    RETURNING(FcChar8 *, FcStrListNext, (FcStrList * list), (list))                                                 \
    VOID(FcStrListDone, (FcStrList * list), (list))

#define DEFINE_LIBRARY(table, functions, soname, package)                                                           \
    static struct {                                                                                                 \
        functions(BADGE_POINTER, BADGE_VOID_POINTER)                                                                \
    } table;                                                                                                        \
    static void resolve_##table(void) {                                                                             \
        void *library = badge_library_open(soname, package);                                                        \
        functions(RESOLVE_##table, RESOLVE_VOID_##table)                                                            \
    }                                                                                                               \
    static pthread_once_t resolved_##table = PTHREAD_ONCE_INIT;                                                     \
    static void load_##table(void) { pthread_once(&resolved_##table, resolve_##table); }

#define RESOLVE_freetype(type, name, parameters, arguments)                                                         \
    *(void **)&freetype.name = badge_library_symbol(library, "libfreetype.so.6", "libfreetype6", #name);
#define RESOLVE_VOID_freetype(name, parameters, arguments) RESOLVE_freetype(void, name, parameters, arguments)
#define RESOLVE_fontconfig(type, name, parameters, arguments)                                                       \
    *(void **)&fontconfig.name = badge_library_symbol(library, "libfontconfig.so.1", "libfontconfig1", #name);
#define RESOLVE_VOID_fontconfig(name, parameters, arguments) RESOLVE_fontconfig(void, name, parameters, arguments)

DEFINE_LIBRARY(freetype, BADGE_FREETYPE_FUNCTIONS, "libfreetype.so.6", "libfreetype6")
DEFINE_LIBRARY(fontconfig, BADGE_FONTCONFIG_FUNCTIONS, "libfontconfig.so.1", "libfontconfig1")

#define FORWARD_freetype(type, name, parameters, arguments) BADGE_FORWARD(freetype, load_freetype, type, name, parameters, arguments)
#define FORWARD_VOID_freetype(name, parameters, arguments) BADGE_FORWARD_VOID(freetype, load_freetype, name, parameters, arguments)
#define FORWARD_fontconfig(type, name, parameters, arguments) BADGE_FORWARD(fontconfig, load_fontconfig, type, name, parameters, arguments)
#define FORWARD_VOID_fontconfig(name, parameters, arguments) BADGE_FORWARD_VOID(fontconfig, load_fontconfig, name, parameters, arguments)
BADGE_FREETYPE_FUNCTIONS(FORWARD_freetype, FORWARD_VOID_freetype)
BADGE_FONTCONFIG_FUNCTIONS(FORWARD_fontconfig, FORWARD_VOID_fontconfig)
