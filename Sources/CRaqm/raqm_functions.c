// The badge_raqm* functions of shim.h, calling libraqm's through a table that
// badge_raqm_load() fills.
#include "shim.h"

enum { BADGE_RAQM_FUNCTIONS(BADGE_LAZY_INDEX, BADGE_LAZY_INDEX_VOID) badge_raqm_function_count };

static const char *const badge_raqm_names[] = {BADGE_RAQM_FUNCTIONS(BADGE_LAZY_NAME, BADGE_LAZY_NAME_VOID)};
static void *badge_lazy_table[badge_raqm_function_count];
static badge_lazy_library badge_raqm_library =
    BADGE_LAZY_LIBRARY_INIT("libraqm.so.0", badge_raqm_names, badge_lazy_table, badge_raqm_function_count);

int badge_raqm_load(char *message, size_t capacity) {
    return badge_lazy_library_load(&badge_raqm_library, message, capacity);
}

BADGE_RAQM_FUNCTIONS(BADGE_LAZY_FORWARD, BADGE_LAZY_FORWARD_VOID)
