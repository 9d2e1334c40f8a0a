// Two-lane arithmetic for Canvas's gradient loops that Swift does one lane at
// a time: its SIMD2<Double>.squareRoot() is two scalar sqrtsd with a branch
// each (for errno), and its Double-to-Int conversions are scalar too. These
// give the very same results (IEEE square root is correctly rounded; the
// conversion truncates, as Swift's Int(_:) does), two lanes an instruction.
#ifndef BADGE_CANVAS_MATH_H
#define BADGE_CANVAS_MATH_H

typedef double badge_double2 __attribute__((__ext_vector_type__(2)));
typedef int badge_int2 __attribute__((__ext_vector_type__(2)));

static inline __attribute__((__always_inline__)) badge_double2 badge_sqrt2(badge_double2 v) {
    return __builtin_elementwise_sqrt(v);
}

// Each lane as Canvas.byte does it: clamped to 0...255, plus 0.5, truncated.
static inline __attribute__((__always_inline__)) badge_int2 badge_bytes2(badge_double2 v) {
    badge_double2 zero = 0.0, top = 255.0;
    v = __builtin_elementwise_max(__builtin_elementwise_min(v, top), zero) + 0.5;
    return __builtin_convertvector(v, badge_int2);
}

#endif
