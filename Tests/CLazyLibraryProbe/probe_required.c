// probe_function_zlib_lacks required: the load itself fails. Only the table
// and the load are defined here (the forwarders are probe_optional.c's).
#include "probe.h"

#define BADGE_PROBE_REQUIRED_FUNCTIONS(RETURNING, VOID, OPTIONAL) \
    RETURNING(const char *, zlibVersion, (void), ())              \
    RETURNING(const char *, probe_function_zlib_lacks, (int value), (value))

enum { BADGE_PROBE_REQUIRED_FUNCTIONS(BADGE_LAZY_INDEX, BADGE_LAZY_INDEX_VOID, BADGE_LAZY_INDEX) probe_count };
static const char *const names[] = {BADGE_PROBE_REQUIRED_FUNCTIONS(BADGE_LAZY_NAME, BADGE_LAZY_NAME_VOID, BADGE_LAZY_NAME)};
static const unsigned char required[] = {
    BADGE_PROBE_REQUIRED_FUNCTIONS(BADGE_LAZY_REQUIRED, BADGE_LAZY_REQUIRED_VOID, BADGE_LAZY_NOT_REQUIRED)};
static void *table[probe_count];
static badge_lazy_library library = BADGE_LAZY_LIBRARY_INIT("libz.so.1", names, required, table, probe_count);

int badge_probe_required_load(char *message, size_t capacity) {
    return badge_lazy_library_load(&library, message, capacity);
}
