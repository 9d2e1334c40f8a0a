// ICU's break iterators: UAX #14 line-break opportunities, and word boundaries
// (UAX #29, with ICU's dictionaries for Chinese and Japanese), opened on first
// use like libraqm (CLazyLibrary says why): only a Chinese, Japanese or Korean
// caption that must be shortened loads it. ICU's own types stay in
// icu_functions.c: Foundation carries a copy of ICU's headers (_FoundationICU),
// and the two must not meet in one Swift module.
#ifndef BADGE_CICU_SHIM_H
#define BADGE_CICU_SHIM_H

#include <stddef.h>
#include <stdint.h>

// Opens ICU's libicuuc (BADGE_SONAME_ICU, the one the build saw), once. 0 when
// loaded; otherwise -1 and the reason in `message` (up to `capacity` bytes).
int badge_icu_load(char *message, size_t capacity);

// The boundaries ICU finds in `text` (UTF-16, `length` units) for `locale`
// ("zh", "ja", "ko"): line-break opportunities when `words` is 0, word
// boundaries otherwise, as UTF-16 offsets from the start, at most `capacity` of
// them into `offsets`. Returns how many, or -1 with ICU's error code in `status`.
// badge_icu_load() must have succeeded.
int32_t badge_icu_boundaries(int words, const char *locale, const uint16_t *text, int32_t length, int32_t *offsets,
                             int32_t capacity, int32_t *status);

#endif
