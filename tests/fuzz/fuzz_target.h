// The contract between a fuzz target and the drivers that feed it (fuzz_driver.cc here;
// a libFuzzer main could call the same function from LLVMFuzzerTestOneInput).
//
// FuzzOne(data, size) must return 0 for every input. A Status error is a normal outcome;
// a crash, an abort (QTUNE_CHECK), a sanitizer report, an exception leaving FuzzOne or a
// run past the driver's time limit is a bug in the code under test.
#pragma once

#include <cstddef>
#include <cstdint>

namespace qtune::fuzz {

// The target's name, used in the driver's messages and saved-input file names.
extern const char* const kTargetName;

int FuzzOne(const uint8_t* data, size_t size);

// Prints the target's own counters (how many inputs got how far) to stderr.
void PrintTargetStats();

}  // namespace qtune::fuzz
