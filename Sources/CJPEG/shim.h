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

typedef struct {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
    int warnings;
    char message[JMSG_LENGTH_MAX];
} badge_jpeg_errors;

static void badge_jpeg_error_exit(j_common_ptr info) {
    badge_jpeg_errors *errors = (badge_jpeg_errors *)info->err;
    (*info->err->format_message)(info, errors->message);
    longjmp(errors->jump, 1);
}

// Warnings (level -1) are what a truncated or damaged file produces while
// still "decoding"; they are counted, never printed.
static void badge_jpeg_emit_message(j_common_ptr info, int level) {
    badge_jpeg_errors *errors = (badge_jpeg_errors *)info->err;
    if (level < 0) {
        if (errors->warnings == 0) (*info->err->format_message)(info, errors->message);
        errors->warnings += 1;
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

enum { BADGE_JPEG_OK = 0, BADGE_JPEG_FAILED = -1, BADGE_JPEG_UNSUPPORTED_COLOR = 1 };

// Decodes `data` at `numerator`/8 scale (1 to 8) into 8-bit RGB.
// CMYK and YCCK files answer BADGE_JPEG_UNSUPPORTED_COLOR (libjpeg cannot
// convert them to RGB; the caller decodes those another way).
static inline int badge_jpeg_decode_scaled(const unsigned char *data, unsigned long size, int numerator,
                                           badge_jpeg_image *out) {
    struct jpeg_decompress_struct info;
    badge_jpeg_errors errors;
    unsigned char *volatile rgb = NULL;
    memset(out, 0, sizeof(*out));
    info.err = jpeg_std_error(&errors.manager);
    errors.manager.error_exit = badge_jpeg_error_exit;
    errors.manager.emit_message = badge_jpeg_emit_message;
    errors.manager.output_message = badge_jpeg_output_message;
    errors.warnings = 0;
    errors.message[0] = 0;
    if (setjmp(errors.jump)) {
        jpeg_destroy_decompress(&info);
        free(rgb);
        memcpy(out->message, errors.message, sizeof(out->message));
        return BADGE_JPEG_FAILED;
    }
    jpeg_create_decompress(&info);
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
