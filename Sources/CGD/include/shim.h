// Typed, importable wrappers for the parts of libgd that are macros or
// variadic, and an error handler that counts gd's warnings instead of
// printing them, so a decode can be refused when gd complained.
#ifndef BADGE_CGD_SHIM_H
#define BADGE_CGD_SHIM_H

#include <gd.h>
#include <stdarg.h>

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

static inline void badge_gd_install_error_counter(void) { gdSetErrorMethod(badge_gd_count_problem); }
static inline void badge_gd_reset_problems(void) { *badge_gd_problem_counter() = 0; }
static inline int badge_gd_problems(void) { return *badge_gd_problem_counter(); }

#endif
