/* SwiftPM needs a source file in every C target; the target only declares
   LLVMFuzzerRunDriver (include/CFuzzerDriver.h) for Swift. */
#include "CFuzzerDriver.h"
