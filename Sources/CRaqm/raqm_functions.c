// The badge_raqm* functions of shim.h, calling libraqm's through a table that
// badge_raqm_load() fills.
#include "shim.h"

BADGE_LAZY_LIBRARY_DEFINE(badge_raqm, BADGE_SONAME_RAQM, BADGE_RAQM_FUNCTIONS)
