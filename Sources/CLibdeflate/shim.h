// libdeflate's decompressor, for checking each band of a PNG badge's image
// data as the encoder writes it (PNGDataCheck.Bands). Its functions are
// prefixed libdeflate_ already; nothing here is renamed.
#ifndef BADGE_CLIBDEFLATE_SHIM_H
#define BADGE_CLIBDEFLATE_SHIM_H
#include <libdeflate.h>
#endif
