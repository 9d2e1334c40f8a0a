// Two lazily opened libraries over zlib, for BadgeKitTests' LazyLibraryTests:
// both list zlibVersion, which zlib has, and probe_function_zlib_lacks, which
// it does not; `badge_probe_optional` lists the latter as OPTIONAL,
// `badge_probe_required` as required.
#ifndef BADGE_CLAZYLIBRARYPROBE_H
#define BADGE_CLAZYLIBRARYPROBE_H

#include <stddef.h>
#include <zlib.h>

#include "badge_lazy_library.h"

// Declared only for the forwarders' prototype check: no library defines it.
const char *probe_function_zlib_lacks(int value);

#define BADGE_PROBE_OPTIONAL_FUNCTIONS(RETURNING, VOID, OPTIONAL) \
    RETURNING(const char *, zlibVersion, (void), ())              \
    OPTIONAL(const char *, probe_function_zlib_lacks, (int value), (value))

int badge_probe_optional_load(char *message, size_t capacity);
int badge_probe_optional_missing(char *message, size_t capacity);
BADGE_PROBE_OPTIONAL_FUNCTIONS(BADGE_LAZY_DECLARE, BADGE_LAZY_DECLARE_VOID, BADGE_LAZY_DECLARE)

// The same two functions, both required: its load fails.
int badge_probe_required_load(char *message, size_t capacity);

#endif
