#include "probe.h"

BADGE_LAZY_LIBRARY_DEFINE(badge_probe_optional, "libz.so.1", BADGE_PROBE_OPTIONAL_FUNCTIONS)
