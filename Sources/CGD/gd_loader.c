// libgd's functions, as badge calls them, forwarded to libgd.so.3 once it is
// loaded on first use (see library_loader.h for why it is not linked).
// Each entry: return type, name, parameters, arguments.
#include "shim.h"
#include "library_loader.h"

#include <pthread.h>

#define BADGE_GD_FUNCTIONS(RETURNING, VOID)                                                                      \
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
    RETURNING(gdImagePtr, gdImageCreatePaletteFromTrueColor, (gdImagePtr im, int dither, int colors), (im, dither, colors)) \
    RETURNING(gdImagePtr, gdImageCreateFromPngPtr, (int size, void *data), (size, data))                         \
    RETURNING(gdImagePtr, gdImageCreateFromJpegPtrEx, (int size, void *data, int ignoreWarning), (size, data, ignoreWarning)) \
    RETURNING(gdImagePtr, gdImageCreateFromGifPtr, (int size, void *data), (size, data))                         \
    RETURNING(gdImagePtr, gdImageCreateFromWebpPtr, (int size, void *data), (size, data))                        \
    RETURNING(void *, gdImagePngPtrEx, (gdImagePtr im, int *size, int level), (im, size, level))                 \
    RETURNING(void *, gdImageJpegPtr, (gdImagePtr im, int *size, int quality), (im, size, quality))             \
    RETURNING(void *, gdImageWebpPtrEx, (gdImagePtr im, int *size, int quantization), (im, size, quantization))  \
    RETURNING(void *, gdImageGifPtr, (gdImagePtr im, int *size), (im, size))                                     \
    RETURNING(void *, gdImageGifAnimBeginPtr, (gdImagePtr im, int *size, int globalCM, int loops), (im, size, globalCM, loops)) \
    RETURNING(void *, gdImageGifAnimAddPtr,                                                                      \
              (gdImagePtr im, int *size, int localCM, int left, int top, int delay, int disposal, gdImagePtr previous), \
              (im, size, localCM, left, top, delay, disposal, previous))                                         \
    RETURNING(void *, gdImageGifAnimEndPtr, (int *size), (size))

#define BADGE_SONAME "libgd.so.3"
#define BADGE_PACKAGE "libgd3"
BADGE_LIBRARY(BADGE_GD_FUNCTIONS)
