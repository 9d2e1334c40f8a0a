// The soname of each library badge opens on first use (CLazyLibrary), as the
// library this build links against names itself. Written by scripts/sonames.py
// from pkg-config's view of each; scripts/test.sh checks it is current.
#ifndef BADGE_SONAMES_H
#define BADGE_SONAMES_H

#define BADGE_SONAME_GD "libgd.so.3"  // pkg-config gdlib
#define BADGE_SONAME_CURL "libcurl.so.4"  // pkg-config libcurl
#define BADGE_SONAME_LIBCRYPTO "libcrypto.so.3"  // pkg-config libcrypto
#define BADGE_SONAME_RAQM "libraqm.so.0"  // pkg-config raqm
#define BADGE_SONAME_ICU "libicuuc.so.72"  // pkg-config icu-uc

#endif
