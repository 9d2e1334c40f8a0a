// The badge_EVP_* functions of shim.h, calling libcrypto's through a table
// that badge_libcrypto_load() fills.
#include "shim.h"

enum { BADGE_LIBCRYPTO_FUNCTIONS(BADGE_LAZY_INDEX, BADGE_LAZY_INDEX_VOID) badge_libcrypto_function_count };

static const char *const badge_libcrypto_names[] = {BADGE_LIBCRYPTO_FUNCTIONS(BADGE_LAZY_NAME, BADGE_LAZY_NAME_VOID)};
static void *badge_lazy_table[badge_libcrypto_function_count];
static badge_lazy_library badge_libcrypto_library =
    BADGE_LAZY_LIBRARY_INIT("libcrypto.so.3", badge_libcrypto_names, badge_lazy_table, badge_libcrypto_function_count);

int badge_libcrypto_load(char *message, size_t capacity) {
    return badge_lazy_library_load(&badge_libcrypto_library, message, capacity);
}

BADGE_LIBCRYPTO_FUNCTIONS(BADGE_LAZY_FORWARD, BADGE_LAZY_FORWARD_VOID)
