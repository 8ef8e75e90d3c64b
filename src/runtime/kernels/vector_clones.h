// QTUNE_VECTOR_CLONES: a function so marked is compiled for AVX-512F, AVX2 and baseline
// x86-64 (what the build targets), and the clone the CPU supports is picked at load time.
// For plain loops the compiler vectorizes and that are only fast with wide vectors.
// Empty under ThreadSanitizer (the clones' load-time resolvers would run instrumented
// before its runtime starts) and on other compilers or architectures.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define QTUNE_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define QTUNE_VECTOR_CLONES
#endif
