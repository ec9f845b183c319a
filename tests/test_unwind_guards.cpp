// The RAII guards of LibTorch's glue, without LibTorch or a GPU (fakes stand for what they guard):
// a CUDA graph's capture ended on every way out (libraries/torch/open_capture.h: TorchGraph), and
// a step undone when it throws (support/undo_on_throw.h: TorchCase's planted fault).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "fixtures/detail/libraries/torch/open_capture.h"
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

// A stream as a capture sees it: whether it captures, and who ended the capture. `end` stands for
// the capture's owner (CUDAGraph::capture_end), `close` for CUDA's own end of whatever is left.
struct FakeStream {
  bool capturing = true;
  bool end_fails_first = false;  // the owner's end throws before it ends the stream's capture
  bool end_fails_after = false;  // it ends the capture, then throws (an invalidated capture)
  std::vector<std::string> calls;

  auto end() {
    return [this] {
      calls.push_back("end");
      if (end_fails_first) throw std::runtime_error("capture must end on the stream it began on");
      capturing = false;
      if (end_fails_after) throw std::runtime_error("operation not permitted when capturing");
    };
  }
  auto close() {
    return [this] {
      calls.push_back("close");
      capturing = false;
    };
  }
};

TEST(OpenCapture, AnEndedCaptureIsLeftAlone) {
  FakeStream stream;
  {
    OpenCapture capture(stream.end(), stream.close());
    capture.end();
  }
  EXPECT_FALSE(stream.capturing);
  EXPECT_EQ(stream.calls, std::vector<std::string>{"end"});
}

// The captured work throws: its owner ends the capture on the way out, then whatever is left is
// closed, and the work's exception goes on.
TEST(OpenCapture, AThrowInTheWorkEndsTheCapture) {
  FakeStream stream;
  EXPECT_EQ(thrown_by([&] {
              OpenCapture capture(stream.end(), stream.close());
              throw std::runtime_error("the work failed");
            }),
            "the work failed");
  EXPECT_FALSE(stream.capturing);
  EXPECT_EQ(stream.calls, (std::vector<std::string>{"end", "close"}));
}

// The owner's end throws before it ends the stream's capture: it is not tried twice (LibTorch's
// allocator would count the capture as ended twice), and the stream's capture is closed.
TEST(OpenCapture, AnEndThatThrowsIsNotTriedAgainAndTheStreamIsClosed) {
  FakeStream stream;
  stream.end_fails_first = true;
  EXPECT_EQ(thrown_by([&] {
              OpenCapture capture(stream.end(), stream.close());
              capture.end();
            }),
            "capture must end on the stream it began on");
  EXPECT_FALSE(stream.capturing);
  EXPECT_EQ(stream.calls, (std::vector<std::string>{"end", "close"}));
}

// The work throws and ending the capture on the way out throws too: the work's exception goes on.
TEST(OpenCapture, WhatEndingThrowsOnTheWayOutIsDropped) {
  FakeStream stream;
  stream.end_fails_after = true;
  EXPECT_EQ(thrown_by([&] {
              OpenCapture capture(stream.end(), stream.close());
              throw std::runtime_error("the work failed");
            }),
            "the work failed");
  EXPECT_FALSE(stream.capturing);
  EXPECT_EQ(stream.calls, (std::vector<std::string>{"end", "close"}));
}

}  // namespace
}  // namespace cubench
