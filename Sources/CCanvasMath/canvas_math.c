// CCanvasMath is header-only (static inline functions that Swift inlines);
// SwiftPM wants a source file in every C target.
#include "canvas_math.h"
