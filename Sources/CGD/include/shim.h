// libgd, opened on first use (CLazyLibrary says why): badge_gd_load() opens
// it, and each function badge calls is badge_<gd's name> here, forwarding to
// gd's. Call badge_gd_load() (0 = loaded) before any of them; Canvas does,
// before it makes or decodes an image.
//
// Also typed, importable wrappers for the parts of libgd that are macros,
// and an error handler that counts gd's warnings instead of printing them,
// so a decode can be refused when gd complained.
#ifndef BADGE_CGD_SHIM_H
#define BADGE_CGD_SHIM_H

#include <gd.h>
#include <stdarg.h>
#include <stddef.h>

#include "badge_lazy_library.h"

// Each entry: return type, name, parameters, arguments. OPTIONAL: the encoders
// and decoders besides PNG's, and the GIF animation's, which only some commands
// reach: a libgd without one fails only its calls (badge_gd_missing says why).
#define BADGE_GD_FUNCTIONS(RETURNING, VOID, OPTIONAL)                                                            \
    RETURNING(gdImagePtr, gdImageCreateTrueColor, (int sx, int sy), (sx, sy))                                   \
    VOID(gdImageDestroy, (gdImagePtr im), (im))                                                                  \
    VOID(gdFree, (void *m), (m))                                                                                 \
    VOID(gdSetErrorMethod, (gdErrorMethod method), (method))                                                     \
    VOID(gdImageAlphaBlending, (gdImagePtr im, int blending), (im, blending))                                    \
    VOID(gdImageSaveAlpha, (gdImagePtr im, int save), (im, save))                                                \
    VOID(gdImageFilledRectangle, (gdImagePtr im, int x1, int y1, int x2, int y2, int color), (im, x1, y1, x2, y2, color)) \
    VOID(gdImageCopy, (gdImagePtr dst, gdImagePtr src, int dstX, int dstY, int srcX, int srcY, int w, int h),    \
         (dst, src, dstX, dstY, srcX, srcY, w, h))                                                               \
    VOID(gdImageCopyResampled,                                                                                   \
         (gdImagePtr dst, gdImagePtr src, int dstX, int dstY, int srcX, int srcY, int dstW, int dstH, int srcW, int srcH), \
         (dst, src, dstX, dstY, srcX, srcY, dstW, dstH, srcW, srcH))                                             \
    RETURNING(gdImagePtr, gdImageCopyGaussianBlurred, (gdImagePtr src, int radius, double sigma), (src, radius, sigma)) \
    RETURNING(gdImagePtr, gdImageCrop, (gdImagePtr src, const gdRect *crop), (src, crop))                         \
    RETURNING(int, gdImageSetInterpolationMethod, (gdImagePtr im, gdInterpolationMethod id), (im, id))           \
    RETURNING(gdImagePtr, gdImageScale, (const gdImagePtr src, const unsigned int w, const unsigned int h), (src, w, h)) \
    RETURNING(int, gdImagePaletteToTrueColor, (gdImagePtr src), (src))                                           \
    RETURNING(gdImagePtr, gdImageCreateFromPngPtr, (int size, void *data), (size, data))                         \
    RETURNING(void *, gdImagePngPtrEx, (gdImagePtr im, int *size, int level), (im, size, level))                 \
    OPTIONAL(gdImagePtr, gdImageCreatePaletteFromTrueColor, (gdImagePtr im, int dither, int colors), (im, dither, colors)) \
    OPTIONAL(gdImagePtr, gdImageCreateFromJpegPtrEx, (int size, void *data, int ignoreWarning), (size, data, ignoreWarning)) \
    OPTIONAL(gdImagePtr, gdImageCreateFromGifPtr, (int size, void *data), (size, data))                          \
    OPTIONAL(gdImagePtr, gdImageCreateFromWebpPtr, (int size, void *data), (size, data))                         \
    OPTIONAL(void *, gdImageJpegPtr, (gdImagePtr im, int *size, int quality), (im, size, quality))               \
    OPTIONAL(void *, gdImageWebpPtrEx, (gdImagePtr im, int *size, int quantization), (im, size, quantization))   \
    OPTIONAL(void *, gdImageGifPtr, (gdImagePtr im, int *size), (im, size))                                      \
    OPTIONAL(void *, gdImageGifAnimBeginPtr, (gdImagePtr im, int *size, int globalCM, int loops), (im, size, globalCM, loops)) \
    OPTIONAL(void *, gdImageGifAnimAddPtr,                                                                       \
             (gdImagePtr im, int *size, int localCM, int left, int top, int delay, int disposal, gdImagePtr previous), \
             (im, size, localCM, left, top, delay, disposal, previous))                                          \
    OPTIONAL(void *, gdImageGifAnimEndPtr, (int *size), (size))

// Opens libgd (BADGE_SONAME_GD), once. 0 when loaded; otherwise -1 and the
// reason in `message` (up to `capacity` bytes).
int badge_gd_load(char *message, size_t capacity);

// After an OPTIONAL function answered NULL on this thread: 1 when this libgd
// lacks it, with the reason in `message`; 0 when gd itself failed. Reads and
// clears what that call left.
int badge_gd_missing(char *message, size_t capacity);

BADGE_GD_FUNCTIONS(BADGE_LAZY_DECLARE, BADGE_LAZY_DECLARE_VOID, BADGE_LAZY_DECLARE)

static inline int badge_gd_sx(gdImagePtr im) { return gdImageSX(im); }
static inline int badge_gd_sy(gdImagePtr im) { return gdImageSY(im); }
static inline int badge_gd_is_truecolor(gdImagePtr im) { return gdImageTrueColor(im); }
static inline int *badge_gd_row(gdImagePtr im, int y) { return im->tpixels[y]; }

// Per-thread count of the warnings and errors gd reported: decodes run
// concurrently, and each must see only its own.
static inline int *badge_gd_problem_counter(void) {
    static __thread int count = 0;
    return &count;
}

static inline void badge_gd_count_problem(int priority, const char *format, va_list args) {
    (void)priority;
    (void)format;
    (void)args;
    *badge_gd_problem_counter() += 1;
}

static inline void badge_gd_install_error_counter(void) { badge_gdSetErrorMethod(badge_gd_count_problem); }
static inline void badge_gd_reset_problems(void) { *badge_gd_problem_counter() = 0; }
static inline int badge_gd_problems(void) { return *badge_gd_problem_counter(); }

#endif
