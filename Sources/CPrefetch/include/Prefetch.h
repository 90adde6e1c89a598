#ifndef GEOTIFY_PREFETCH_H
#define GEOTIFY_PREFETCH_H

/// Asks the processor to start loading the cache line holding `address` into its caches:
/// a hint that neither faults (any address will do) nor changes any result, so that
/// loads of scattered data a computation is about to read overlap instead of waiting
/// for memory one after another. Swift has no way to emit the instruction itself.
static inline __attribute__((always_inline)) void geotify_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

#endif
