// ICU's break iterators, called through a table that badge_icu_load() fills.
// ICU's functions are looked up by their versioned names (ubrk_open_72),
// which its headers' renaming macros give when a name is expanded before it
// is made a string.
#include "shim.h"

#include <unicode/ubrk.h>
#include <unicode/uversion.h>

#include "badge_lazy_library.h"
#include "badge_sonames.h"

#define BADGE_ICU_STRING(x) #x
#define BADGE_ICU_EXPANDED(x) BADGE_ICU_STRING(x)

// ICU's functions by their versioned names (the renaming macros expand `ubrk_open`), and the table they fill.
enum { icu_open, icu_close, icu_first, icu_next, icu_count };
static const char *const badge_icu_names[] = {
    BADGE_ICU_EXPANDED(ubrk_open), BADGE_ICU_EXPANDED(ubrk_close), BADGE_ICU_EXPANDED(ubrk_first), BADGE_ICU_EXPANDED(ubrk_next),
};
static const unsigned char badge_icu_required[icu_count] = {1, 1, 1, 1};
static void *badge_icu_table[icu_count];
static badge_lazy_library badge_icu_this = BADGE_LAZY_LIBRARY_INIT(
    BADGE_SONAME_ICU, badge_icu_names, badge_icu_required, badge_icu_table, icu_count);

int badge_icu_load(char *message, size_t capacity) {
    return badge_lazy_library_load(&badge_icu_this, message, capacity);
}

// The functions' types are the headers' own, so the compiler checks every call.
typedef __typeof__(&ubrk_open) icu_open_function;
typedef __typeof__(&ubrk_close) icu_close_function;
typedef __typeof__(&ubrk_first) icu_step_function;
_Static_assert(__builtin_types_compatible_p(__typeof__(&ubrk_next), icu_step_function), "ubrk_next is not typed as ubrk_first");

int32_t badge_icu_boundaries(int words, const char *locale, const uint16_t *text, int32_t length, int32_t *offsets,
                             int32_t capacity, int32_t *status) {
    UErrorCode error = U_ZERO_ERROR;
    UBreakIterator *iterator =
        ((icu_open_function)badge_icu_table[icu_open])(words ? UBRK_WORD : UBRK_LINE, locale, (const UChar *)text, length, &error);
    if (U_FAILURE(error) || iterator == NULL) {
        *status = (int32_t)error;
        return -1;
    }
    icu_step_function first = (icu_step_function)badge_icu_table[icu_first], next = (icu_step_function)badge_icu_table[icu_next];
    int32_t count = 0;
    for (int32_t at = first(iterator); at != UBRK_DONE && count < capacity; at = next(iterator)) {
        offsets[count++] = at;
    }
    ((icu_close_function)badge_icu_table[icu_close])(iterator);
    *status = 0;
    return count;
}
