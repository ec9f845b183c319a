// A row's outcome as data (report/row_outcome.h, run_log.h, result_json.h; docs/result-file.md):
// what the runner records per repetition is what the JSON row and the console say, read from the
// notes and the registry, never parsed back out of a name or a label.
#include <gtest/gtest.h>

#include <benchmark/benchmark.h>

#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "fixtures/case/family.h"
#include "fixtures/detail/case/registry.h"
#include "fixtures/detail/report/conditions.h"
#include "fixtures/detail/report/console_table.h"
#include "fixtures/detail/report/result_json.h"
#include "fixtures/detail/report/row.h"
#include "fixtures/detail/report/run_log.h"
#include "fixtures/detail/support/compat/benchmark_compat.h"
#include "fixtures/detail/timing/stopping.h"
#include "fixtures/device/env.h"
#include "tests/nothing_case.h"

namespace cubench {
namespace {

using GbRun = benchmark::BenchmarkReporter::Run;

// A family whose names read wrongly to a parser: its name holds a slash and a number-like
// segment, and its string axis has a value made of digits.
void register_misleading_family() {
  static bool done = false;
  if (done) return;
  done = true;
  Family("row_test/3d", "a family whose names mislead a parser")
      .axis(string_axis("layout", {"4096"}))
      .axis(int_axis("n", {7}))
      .make(testing_support::nothing())
      .add();
}
const std::string kName = "row_test/3d/4096/7";

GbRun iteration_run(const std::string& name, std::int64_t repetition, const std::string& label) {
  GbRun run;
  run.run_name.function_name = name;
  run.run_type = GbRun::RT_Iteration;
  run.family_index = run.per_family_instance_index = 0;
  run.repetition_index = repetition;
  run.repetitions = 2;
  run.iterations = 1;
  run.time_unit = benchmark::kMicrosecond;
  run.real_accumulated_time = run.cpu_accumulated_time = 1e-5;
  run.report_label = label;
  return run;
}

std::string json_of(const std::vector<GbRun>& runs) {
  std::ostringstream out, err;
  ResultJson json(/*rewrite_tail=*/false);
  json.SetOutputStream(&out);
  json.SetErrorStream(&err);
  json.ReportRuns(runs);
  return out.str();
}

RowRecord with_reason(const std::string& reason) {
  RowRecord r;
  r.outcome.reason = reason;
  return r;
}

TEST(RunLog, ALongerTrialReplacesTheFirstRepetitionsRecordOthersFollowIt) {
  forget_rows();
  append_row("x", 1, with_reason("trial of 1"));
  append_row("x", 10, with_reason("trial of 10"));  // Google Benchmark's next trial, repetition 0
  append_row("x", 10, with_reason("second repetition"));  // at the count repetition 0 settled on
  ASSERT_TRUE(row_record("x", 0).has_value());
  EXPECT_EQ(row_record("x", 0)->outcome.reason, "trial of 10");
  EXPECT_EQ(row_record("x", 0)->repetition, 0);
  EXPECT_EQ(row_record("x", 1)->outcome.reason, "second repetition");
  EXPECT_EQ(row_record("x", 1)->repetition, 1);
  EXPECT_FALSE(row_record("x", 2).has_value());
  EXPECT_FALSE(row_record("y", 0).has_value());
  // The adaptive loop: one iteration a repetition.
  forget_rows();
  append_row("x", 1, with_reason("trial of 1"));
  append_row("x", 1, with_reason("second repetition"));
  EXPECT_EQ(row_record("x", 0)->outcome.reason, "trial of 1");
  EXPECT_EQ(row_record("x", 1)->outcome.reason, "second repetition");
}

// What a reader gets is its own copy, taken under the log's lock: the log grows and is cleared as
// the runner records (a reporter a test drives may read from another thread), so an answer that
// pointed into it would read a moved or freed outcome once later repetitions are recorded.
TEST(RunLog, ARecordReadIsACopyThatOutlivesTheLog) {
  forget_rows();
  RowRecord first =
      with_reason("the first repetition's reason, too long for a string's own buffer");
  first.outcome.status = RowStatus::error;
  append_row("x", 1, first);
  const auto read = row_record("x", 0);
  static_assert(std::is_same_v<decltype(read), const std::optional<RowRecord>>);
  ASSERT_TRUE(read);
  for (int i = 0; i < 64; ++i)  // later repetitions: the log's storage moves under a pointer
    append_row("x", 1,
               with_reason("repetition " + std::to_string(i + 1) +
                           ", with words enough to be on the heap"));
  EXPECT_EQ(row_record("x", 64)->outcome.reason,
            "repetition 64, with words enough to be on the heap");
  forget_rows();
  EXPECT_EQ(read->outcome.status, RowStatus::error);
  EXPECT_EQ(read->outcome.reason,
            "the first repetition's reason, too long for a string's own buffer");
}

TEST(RowOutcome, TheJsonRowCarriesFamilyAxesStatusAndNotesFromTheRecordNotTheText) {
  register_misleading_family();
  forget_rows();
  StoppingParams params;
  params.timeout = 5;
  StoppingRule rule(params);
  rule.add(1e-5, 1e-5);
  rule.add(1.2e-5, 1.2e-5);
  RowOutcome measured;
  // The family's own words look like a timeout's: the console must not take them for one.
  measured.notes.emplace_back("case", "stopped: timeout 9s: words of the family's own");
  measured.notes.push_back(stop_note(StopReason::noise_reached, rule));
  Conditions c;
  c.polls = 200, c.power_capped = 200;
  for (Note& n : condition_notes(c, 700)) measured.notes.push_back(n);
  append_row(kName, 1, RowRecord{find_spec(kName), 0, {{"samples", 2}}, measured});
  RowOutcome not_run = failed_row(NotRunAtItsTurn("needs 12.0 GiB of device memory; 1.0 GiB free"));
  append_row(kName, 1, RowRecord{find_spec(kName), 0, {}, not_run});

  GbRun first = iteration_run(kName, 0, label_of(measured.notes));
  GbRun second = iteration_run(kName, 1, "");
  const std::string text = json_of({first, second});
  // Google Benchmark's fields stay; each row gains its member, last.
  EXPECT_NE(text.find("\"name\": \"row_test/3d/4096/7\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"cubench\": {\"family\": \"row_test/3d\", \"axis_values\": {\"layout\": "
                      "\"4096\", \"n\": 7}, \"status\": \"measured\", \"reason\": \"\""),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("{\"kind\": \"stop\", \"rule\": \"noise_reached\", \"noise_pct\": "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("{\"kind\": \"power_capped\", \"pct\": 100, \"cap_W\": 700, \"text\": "
                      "\"power-capped in 100% of polls (software cap 700 W)\"}"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\"status\": \"not_run\", \"reason\": \"needs 12.0 GiB of device memory; "
                      "1.0 GiB free\""),
            std::string::npos)
      << text;
  // Two row objects, each closed after its member.
  std::size_t members = 0;
  for (std::size_t at = text.find("\"cubench\": "); at != std::string::npos;
       at = text.find("\"cubench\": ", at + 1))
    ++members;
  EXPECT_EQ(members, 2u) << text;

  // The console: the family and its axes from the registry; notes from the typed notes only.
  const TableRow row = table_row(first);
  EXPECT_EQ(row.family, "row_test/3d");
  EXPECT_EQ(row.axis_values, (std::vector<std::string>{"4096", "7"}));
  EXPECT_EQ(row.notes, "power-capped 100%");
  const TableRow skipped = table_row(second);
  EXPECT_EQ(skipped.time, "-");
  EXPECT_EQ(skipped.notes, "not run: needs 12.0 GiB of device memory; 1.0 GiB free");
}

TEST(RowOutcome, ASkipsErrorFieldsAreNamedAsASkip) {
  forget_rows();
  append_row("s", 1, RowRecord{nullptr, 0, {}, failed_row(NotSupported("fp8 needs 8.9"))});
  append_row("e", 1, RowRecord{nullptr, 0, {}, failed_row(ValidationError("max error 1", "y"))});
  GbRun s = iteration_run("s", 0, ""), e = iteration_run("e", 0, "");
  // As Google Benchmark marks them: 1.7 has no skip, an error for both.
  mark_run_failed(s, "s: not supported", /*skip=*/true);
  mark_run_failed(e, "e: wrong", /*skip=*/false);
  const std::string s_row = member_lines(json_row(s), 6), e_row = member_lines(json_row(e), 6);
  EXPECT_NE(s_row.find("\"skipped\": true,\n      \"skip_message\": \"s: not supported\",\n"),
            std::string::npos)
      << s_row;
  EXPECT_EQ(s_row.find("error_occurred"), std::string::npos) << s_row;
  EXPECT_NE(e_row.find("\"error_occurred\": true,\n      \"error_message\": \"e: wrong\",\n"),
            std::string::npos)
      << e_row;
  EXPECT_NE(e_row.find("\"status\": \"wrong_result\""), std::string::npos) << e_row;
  EXPECT_NE(e_row.find("{\"kind\": \"failed_check\", \"check\": \"y\", "
                       "\"known_inaccuracy\": false"),
            std::string::npos)
      << e_row;
  forget_rows();
}

// A repetition whose sampling left no time to report (no sample taken, or samples whose timer read
// nothing) is an error row with its reason, which the runner records as it records any outcome:
// never a measured row of NaN rates, nor a repetition left without an outcome.
TEST(RowOutcome, ASamplingWithoutASampleIsAnErrorRowSayingWhy) {
  register_misleading_family();
  const Spec* spec = find_spec(kName);
  ASSERT_NE(spec, nullptr);
  const std::unique_ptr<Env> env = Env::host_only(1);
  const testing_support::Nothing work;
  const MeasuredCase c{*spec, work, *env, nullptr, false, 0, 0, 0, 0, std::nullopt, 1, false};
  const Row none = measured_row(c, Sampled{});
  EXPECT_EQ(none.outcome.status, RowStatus::error);
  EXPECT_EQ(none.outcome.reason, "no sample was taken: the repetition's loop ran no iteration");
  EXPECT_TRUE(none.counters.empty());
  Sampled timed_nothing;
  timed_nothing.per_run = {0.0, 0.0};
  timed_nothing.runs = 2;
  const Row zero = measured_row(c, timed_nothing);
  EXPECT_EQ(zero.outcome.status, RowStatus::error);
  EXPECT_EQ(failure_message(kName, zero.outcome),
            kName +
                ": no sample was taken: its 2 sample(s) of 2 run(s) timed 0 s in all (the "
                "timer read no time)");
  EXPECT_TRUE(zero.counters.empty());
  Sampled one;  // a sample that timed something is a row
  one.per_run = {1e-3};
  one.runs = 1;
  one.total = 1e-3;
  const Row measured = measured_row(c, one);
  EXPECT_EQ(measured.outcome.status, RowStatus::measured);
  EXPECT_EQ(measured.counters.at("samples"), 1);
}

TEST(RowOutcome, FailuresTakeTheirStatusFromTheExceptionsType) {
  EXPECT_EQ(failed_row(OutOfMemory("cudaMalloc: out of memory", 1 << 20)).status,
            RowStatus::out_of_memory);
  EXPECT_EQ(failed_row(Error("cuBLAS said no")).status, RowStatus::error);
  const RowOutcome known = failed_row(KnownInaccuracy("off by 2%", "singular values"));
  EXPECT_EQ(known.status, RowStatus::wrong_result);
  EXPECT_EQ(failure_message("svd/fp32/4096", known),
            "svd/fp32/4096: inaccurate here, reported, not timed: off by 2%");
  EXPECT_EQ(failure_message("x", failed_row(NotRunAtItsTurn("needs 1 GiB"))),
            "x: not run: needs 1 GiB");
  EXPECT_TRUE(is_skip(failed_row(NotSupported("sm_90 only")).status));
  EXPECT_FALSE(is_skip(failed_row(OutOfMemory("oom", 1)).status));
}

TEST(ConsoleTable, NotesSayWhySamplingStoppedAndTheConditions) {
  StoppingParams params;
  params.timeout = 5;
  StoppingRule settled(params);
  for (double t : {1.0, 1.1, 0.9}) settled.add(t, t);
  std::vector<Note> notes = {Note("case", "cuSOLVER gesvd"),
                             stop_note(StopReason::noise_converged, settled)};
  Conditions capped;
  capped.polls = 100, capped.power_capped = 100;
  for (Note& n : condition_notes(capped, 700)) notes.push_back(n);
  EXPECT_EQ(console_notes(notes), "settled at 10.00%; power-capped 100%");
  StoppingRule reached(params);
  EXPECT_EQ(console_notes(
                {Note("case", "cuBLASLt algo 21"), stop_note(StopReason::noise_reached, reached)}),
            "");
  Conditions hot;
  hot.polls = 100, hot.slowdown = 12, hot.other_processes = 1;
  std::vector<Note> timed_out = {stop_note(StopReason::timeout, settled)};
  for (Note& n : condition_notes(hot, 0)) timed_out.push_back(n);
  EXPECT_EQ(console_notes(timed_out), "timeout 5s; THROTTLED; BUSY GPU");
  Conditions rare;
  rare.polls = 1000, rare.power_capped = 3;
  EXPECT_EQ(console_notes(condition_notes(rare, 0)), "power-capped <1%");
}

}  // namespace
}  // namespace cubench
