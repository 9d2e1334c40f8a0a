// libjpeg-turbo's scaled decoding (M/8 of the stored size, straight from the
// DCT coefficients), which libgd does not offer: a 12 MP photo for a
// 1024 px badge then never costs a full-size decode. libjpeg reports fatal
// errors by calling exit() unless error_exit is replaced, and only a longjmp
// can leave it, which Swift cannot do: so the whole decode lives here.
#ifndef BADGE_CJPEG_SHIM_H
#define BADGE_CJPEG_SHIM_H

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>

enum { BADGE_JPEG_OK = 0, BADGE_JPEG_FAILED = -1, BADGE_JPEG_UNSUPPORTED_COLOR = 1, BADGE_JPEG_TOO_MANY_SCANS = 2,
       BADGE_JPEG_STOPPED = 3 };

typedef struct {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
    int warnings;
    int status;  // why the decode jumped out: BADGE_JPEG_FAILED, _TOO_MANY_SCANS or _STOPPED
    char message[JMSG_LENGTH_MAX];
} badge_jpeg_errors;

// What bounds a decode while it runs: libjpeg calls the progress monitor
// between rows of every pass, and for a progressive file while it reads each
// scan. Past `max_scans` scans (a file that repeats its last scan thousands of
// times decodes for hours) or when `should_stop(context)` answers nonzero
// (cancelled, or past its deadline), the decode ends at once.
typedef struct {
    int max_scans;
    int (*should_stop)(void *context);
    void *context;
} badge_jpeg_bounds;

typedef struct {
    struct jpeg_progress_mgr manager;
    badge_jpeg_bounds bounds;
} badge_jpeg_progress;

static void badge_jpeg_stop(j_common_ptr info, int status, const char *message) {
    badge_jpeg_errors *errors = (badge_jpeg_errors *)info->err;
    errors->status = status;
    snprintf(errors->message, sizeof(errors->message), "%s", message);
    longjmp(errors->jump, 1);
}

static void badge_jpeg_progress_monitor(j_common_ptr info) {
    badge_jpeg_progress *progress = (badge_jpeg_progress *)info->progress;
    if (info->is_decompressor && progress->bounds.max_scans > 0 &&
        ((j_decompress_ptr)info)->input_scan_number > progress->bounds.max_scans) {
        badge_jpeg_stop(info, BADGE_JPEG_TOO_MANY_SCANS, "too many progressive scans");
    }
    if (progress->bounds.should_stop != NULL && progress->bounds.should_stop(progress->bounds.context)) {
        badge_jpeg_stop(info, BADGE_JPEG_STOPPED, "stopped");
    }
}

static void badge_jpeg_error_exit(j_common_ptr info) {
    badge_jpeg_errors *errors = (badge_jpeg_errors *)info->err;
    (*info->err->format_message)(info, errors->message);
    longjmp(errors->jump, 1);
}

// Warnings (level -1) are what a truncated or damaged file produces while
// still "decoding": the first one ends the decode, as djpeg -strict does,
// rather than letting a damaged file be decoded to its end.
static void badge_jpeg_emit_message(j_common_ptr info, int level) {
    badge_jpeg_errors *errors = (badge_jpeg_errors *)info->err;
    if (level < 0) {
        (*info->err->format_message)(info, errors->message);
        errors->warnings += 1;
        errors->status = BADGE_JPEG_FAILED;
        longjmp(errors->jump, 1);
    }
}

static void badge_jpeg_output_message(j_common_ptr info) { (void)info; }

typedef struct {
    unsigned char *rgb;  // width * height * 3 bytes, malloc'ed; the caller frees it
    int width;
    int height;
    int warnings;
    char message[JMSG_LENGTH_MAX];
} badge_jpeg_image;

// Decodes `data` at `numerator`/8 scale (1 to 8) into 8-bit RGB, within
// `bounds`. CMYK and YCCK files answer BADGE_JPEG_UNSUPPORTED_COLOR (libjpeg
// cannot convert them to RGB; the caller decodes those another way).
static inline int badge_jpeg_decode_scaled(const unsigned char *data, unsigned long size, int numerator,
                                           badge_jpeg_bounds bounds, badge_jpeg_image *out) {
    struct jpeg_decompress_struct info;
    badge_jpeg_errors errors;
    badge_jpeg_progress progress;
    unsigned char *volatile rgb = NULL;
    memset(out, 0, sizeof(*out));
    info.err = jpeg_std_error(&errors.manager);
    errors.manager.error_exit = badge_jpeg_error_exit;
    errors.manager.emit_message = badge_jpeg_emit_message;
    errors.manager.output_message = badge_jpeg_output_message;
    errors.warnings = 0;
    errors.status = BADGE_JPEG_FAILED;
    errors.message[0] = 0;
    memset(&progress, 0, sizeof(progress));
    progress.manager.progress_monitor = badge_jpeg_progress_monitor;
    progress.bounds = bounds;
    if (setjmp(errors.jump)) {
        jpeg_destroy_decompress(&info);
        free(rgb);
        memcpy(out->message, errors.message, sizeof(out->message));
        out->warnings = errors.warnings;
        return errors.status;
    }
    jpeg_create_decompress(&info);
    info.progress = &progress.manager;
    jpeg_mem_src(&info, data, size);
    jpeg_read_header(&info, TRUE);
    if (info.jpeg_color_space == JCS_CMYK || info.jpeg_color_space == JCS_YCCK) {
        jpeg_destroy_decompress(&info);
        return BADGE_JPEG_UNSUPPORTED_COLOR;
    }
    info.scale_num = (unsigned int)numerator;
    info.scale_denom = 8;
    info.out_color_space = JCS_RGB;
    jpeg_start_decompress(&info);
    size_t stride = (size_t)info.output_width * 3;
    rgb = (unsigned char *)malloc(stride * info.output_height);
    if (rgb == NULL) {
        jpeg_destroy_decompress(&info);
        snprintf(out->message, sizeof(out->message), "out of memory");
        return BADGE_JPEG_FAILED;
    }
    while (info.output_scanline < info.output_height) {
        JSAMPROW row = rgb + stride * info.output_scanline;
        jpeg_read_scanlines(&info, &row, 1);
    }
    jpeg_finish_decompress(&info);
    out->rgb = rgb;
    out->width = (int)info.output_width;
    out->height = (int)info.output_height;
    out->warnings = errors.warnings;
    memcpy(out->message, errors.message, sizeof(out->message));
    jpeg_destroy_decompress(&info);
    return BADGE_JPEG_OK;
}

#endif
