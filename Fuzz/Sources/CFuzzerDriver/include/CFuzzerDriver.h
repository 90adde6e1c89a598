#ifndef GEOTIFY_CFUZZERDRIVER_H
#define GEOTIFY_CFUZZERDRIVER_H
/* libFuzzer's entry point for programs that have a main function of their own (as a
   SwiftPM executable always has): it parses libFuzzer's flags in argv and runs
   `callback` on each input. Defined by the fuzzer runtime that -sanitize=fuzzer links. */
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
