// The tests' main: Google Test's, except that a test binary started as a child process
// (child_process.h: a start-up family's sample, or the child-process tests) runs that entry
// instead, as cubench's own main does.
#include <gtest/gtest.h>

#include <optional>

#include "fixtures/process/child_process.h"

int main(int argc, char** argv) {
  if (const std::optional<int> child = cubench::run_child_entry_if_asked(argc, argv))
    cubench::leave_child(*child);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
