// The badge_gd* functions of shim.h, calling libgd's through a table that
// badge_gd_load() fills.
#include "shim.h"

BADGE_LAZY_LIBRARY_DEFINE(badge_gd, BADGE_SONAME_GD, BADGE_GD_FUNCTIONS)
