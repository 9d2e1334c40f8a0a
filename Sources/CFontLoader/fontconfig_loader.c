// fontconfig's functions, as badge calls them, forwarded to libfontconfig.so.1
// opened on first use (see library_loader.h): linked, fontconfig and FreeType
// and the libraries they bring (expat, libpng, brotli) were loaded and
// relocated before `main` on every run, `badge --help` included, while the
// commands that draw a caption now open them on a spare thread (Prewarm) as
// the arguments are parsed. Each entry: return type, name, parameters, arguments.
#include "library_loader.h"

#include <fontconfig/fontconfig.h>
#include <pthread.h>

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

#define BADGE_SONAME "libfontconfig.so.1"
#define BADGE_PACKAGE "libfontconfig1"
BADGE_LIBRARY(BADGE_FONTCONFIG_FUNCTIONS)
