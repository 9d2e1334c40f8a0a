// libjpeg-turbo's functions, as CJPEG's decoder calls them, forwarded to
// libjpeg.so.62 once it is opened on first use (see library_loader.h): only
// an imported JPEG needs it, and linked it was loaded before `main` on every
// run. Each entry: return type, name, parameters, arguments.
#include "library_loader.h"

#include <pthread.h>
#include <stdio.h>
#include <jpeglib.h>

#define BADGE_JPEG_FUNCTIONS(RETURNING, VOID)                                                                        \
    RETURNING(struct jpeg_error_mgr *, jpeg_std_error, (struct jpeg_error_mgr * err), (err))                        \
    VOID(jpeg_CreateDecompress, (j_decompress_ptr info, int version, size_t size), (info, version, size))           \
    VOID(jpeg_destroy_decompress, (j_decompress_ptr info), (info))                                                  \
    VOID(jpeg_mem_src, (j_decompress_ptr info, const unsigned char *data, unsigned long size), (info, data, size))  \
    RETURNING(int, jpeg_read_header, (j_decompress_ptr info, boolean require_image), (info, require_image))         \
    RETURNING(boolean, jpeg_start_decompress, (j_decompress_ptr info), (info))                                      \
    RETURNING(JDIMENSION, jpeg_read_scanlines, (j_decompress_ptr info, JSAMPARRAY rows, JDIMENSION count),          \
              (info, rows, count))                                                                                  \
    RETURNING(boolean, jpeg_finish_decompress, (j_decompress_ptr info), (info))

#define BADGE_SONAME "libjpeg.so.62"
#define BADGE_PACKAGE "libjpeg62-turbo"
BADGE_LIBRARY(BADGE_JPEG_FUNCTIONS)
