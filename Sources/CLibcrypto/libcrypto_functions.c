// The badge_EVP_* functions of shim.h, calling libcrypto's through a table
// that badge_libcrypto_load() fills.
#include "shim.h"

BADGE_LAZY_LIBRARY_DEFINE(badge_libcrypto, BADGE_SONAME_LIBCRYPTO, BADGE_LIBCRYPTO_FUNCTIONS)
