// The RAII guards of LibTorch's glue, without LibTorch or a GPU (fakes stand for what they guard):
// a step undone when it throws (support/undo_on_throw.h: TorchCase's planted fault).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "fixtures/detail/support/undo_on_throw.h"

namespace cubench {
namespace {

// What `body` threw ("" for nothing).
template <class Body>
std::string thrown_by(Body&& body) {
  try {
    body();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(UndoOnThrow, UndoesOnlyWhenItsScopeIsLeftByAThrow) {
  int undone = 0;
  {
    UndoOnThrow undo([&] { ++undone; });
  }
  EXPECT_EQ(undone, 0);
  EXPECT_EQ(thrown_by([&] {
              UndoOnThrow undo([&] { ++undone; });
              throw std::runtime_error("the step failed");
            }),
            "the step failed");
  EXPECT_EQ(undone, 1);
}

// The step's exception is the one that goes on: the undo's own is dropped, not a second exception
// out of a destructor (which would end the process).
TEST(UndoOnThrow, WhatTheUndoThrowsIsDropped) {
  EXPECT_EQ(thrown_by([] {
              UndoOnThrow undo([] { throw std::runtime_error("the undo failed"); });
              throw std::runtime_error("the step failed");
            }),
            "the step failed");
}

}  // namespace
}  // namespace cubench
