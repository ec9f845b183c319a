# docs/adding-a-benchmark.md's LibTorch step shows its example's one file whole, as a ```cpp block
# holding exactly the file's text, so what a reader copies is what ctest builds
# (contract.walkthrough_torch_family_registers_from_one_file), as check_walkthrough_inline.cmake
# holds the plain example's.
#   -DSOURCE_DIR=<repository root>
file(READ "${SOURCE_DIR}/docs/adding-a-benchmark.md" doc)
set(rel docs/examples/torch_scale/benchmarks/torch_scale.torch.cpp)
file(READ "${SOURCE_DIR}/${rel}" text)
string(FIND "${doc}" "```cpp\n${text}```" at)
if(at EQUAL -1)
  message(FATAL_ERROR "docs/adding-a-benchmark.md does not show ${rel} whole, as it is")
endif()
