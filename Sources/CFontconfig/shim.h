// fontconfig, to find the caption's font file.
#ifndef BADGE_CFONTCONFIG_SHIM_H
#define BADGE_CFONTCONFIG_SHIM_H

#include <fontconfig/fontconfig.h>

#endif
