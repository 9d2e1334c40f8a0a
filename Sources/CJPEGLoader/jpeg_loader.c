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

static struct {
    BADGE_JPEG_FUNCTIONS(BADGE_POINTER, BADGE_VOID_POINTER)
} jpeg;

#define SONAME "libjpeg.so.62"
#define PACKAGE "libjpeg62-turbo"

static void resolve(void) {
    void *library = badge_library_open(SONAME, PACKAGE);
#define RESOLVE(type, name, parameters, arguments) *(void **)&jpeg.name = badge_library_symbol(library, SONAME, PACKAGE, #name);
#define RESOLVE_VOID(name, parameters, arguments) RESOLVE(void, name, parameters, arguments)
    BADGE_JPEG_FUNCTIONS(RESOLVE, RESOLVE_VOID)
}

static pthread_once_t resolved = PTHREAD_ONCE_INIT;

static void ensure_loaded(void) { pthread_once(&resolved, resolve); }

#define FORWARD(type, name, parameters, arguments) BADGE_FORWARD(jpeg, ensure_loaded, type, name, parameters, arguments)
#define FORWARD_VOID(name, parameters, arguments) BADGE_FORWARD_VOID(jpeg, ensure_loaded, name, parameters, arguments)
BADGE_JPEG_FUNCTIONS(FORWARD, FORWARD_VOID)
