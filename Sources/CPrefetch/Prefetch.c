// The prefetch hint is header-only (static inline, see include/Prefetch.h); SwiftPM
// needs a source file to build the target.
#include "Prefetch.h"
