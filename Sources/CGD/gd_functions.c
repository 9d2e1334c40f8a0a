// The badge_gd* functions of shim.h, calling libgd's through a table that
// badge_gd_load() fills.
#include "shim.h"

enum { BADGE_GD_FUNCTIONS(BADGE_LAZY_INDEX, BADGE_LAZY_INDEX_VOID) badge_gd_function_count };

static const char *const badge_gd_names[] = {BADGE_GD_FUNCTIONS(BADGE_LAZY_NAME, BADGE_LAZY_NAME_VOID)};
static void *badge_lazy_table[badge_gd_function_count];
static badge_lazy_library badge_gd_library =
    BADGE_LAZY_LIBRARY_INIT("libgd.so.3", badge_gd_names, badge_lazy_table, badge_gd_function_count);

int badge_gd_load(char *message, size_t capacity) {
    return badge_lazy_library_load(&badge_gd_library, message, capacity);
}

BADGE_GD_FUNCTIONS(BADGE_LAZY_FORWARD, BADGE_LAZY_FORWARD_VOID)
