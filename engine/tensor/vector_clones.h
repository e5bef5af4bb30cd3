// CAIRN_VECTOR_CLONES: a function compiled for several x86-64 levels and
// picked at run time (GCC function multi-versioning), for plain C++ loops the
// compiler vectorizes (model/'s element-wise math, the calibration's read
// loop). The choice is fixed per machine, so every path of one process runs
// the same instructions. None under ASan or elsewhere.
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define CAIRN_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define CAIRN_VECTOR_CLONES
#endif
