// The result file cubench writes itself (report/result_json.h): each row's members named, ordered
// and valued as Google Benchmark's own JSON reporter writes them (compare.py and the tools read
// that shape), its "cubench" object last; the context Google Benchmark's members as its reporter
// writes them; a file that is a whole document after every row; an interrupted run's file written
// again from memory with its mark. (tests/data/result-file-*.json, held against a run by
// run.result_file_*: the whole file, as it was before.)
#include <gtest/gtest.h>

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "fixtures/detail/report/benchmark_context.h"
#include "fixtures/detail/report/result_json.h"
#include "fixtures/detail/report/run_log.h"
#include "fixtures/detail/support/compat/benchmark_compat.h"
#include "fixtures/detail/support/json_text.h"

namespace cubench {
namespace {

using GbRun = benchmark::BenchmarkReporter::Run;

GbRun run_of(const std::string& name, const std::string& label) {
  GbRun run;
  run.run_name.function_name = name;
  run.run_name.time_type = "manual_time";
  run.run_type = GbRun::RT_Iteration;
  run.family_index = 3;
  run.per_family_instance_index = 1;
  run.repetition_index = 1;
  run.repetitions = 2;
  run.iterations = 17;
  run.time_unit = benchmark::kMillisecond;
  run.real_accumulated_time = 0.123456789012345;
  run.cpu_accumulated_time = 1.5e-3;
  run.report_label = label;
  run.counters["TFLOPS"] = 312.25;
  run.counters["rel_error"] = 1.0 / 3.0;
  run.counters["not_a_number"] = std::numeric_limits<double>::quiet_NaN();
  run.counters["too_big"] = std::numeric_limits<double>::infinity();
  return run;
}

// What Google Benchmark's JSON reporter writes for one row, its members without the braces.
std::string google_benchmark_members(const GbRun& run) {
  std::ostringstream out, err;
  benchmark::JSONReporter json;
  json.SetOutputStream(&out);
  json.SetErrorStream(&err);
  json.ReportRuns({run});
  std::string text = out.str();
  const std::string open = "    {\n", close = "\n    }";
  EXPECT_EQ(text.rfind(open, 0), 0u) << text;
  EXPECT_EQ(text.substr(text.size() - close.size()), close) << text;
  return text.substr(open.size(), text.size() - open.size() - close.size());
}

// A row's members as both writers lay them out, one a line: [(name, the value's text)].
std::vector<std::pair<std::string, std::string>> members_of(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == ',') line.pop_back();
    const auto colon = line.find("\": ");
    EXPECT_NE(colon, std::string::npos) << line;
    if (colon == std::string::npos) continue;
    const auto name = line.find('"');
    out.emplace_back(Json::parse(line.substr(name, colon + 1 - name)).get<std::string>(),
                     line.substr(colon + 3));
  }
  return out;
}

// Whether two values' texts are one value: the same number however written (3.1225e+02 and
// 312.25), the same string however escaped; NaN and the infinities as their one spelling.
bool same_value(const std::string& a, const std::string& b) {
  for (const char* literal : {"NaN", "-NaN", "Infinity", "-Infinity"})
    if (a == literal || b == literal) return a == b;
  return Json::parse(a) == Json::parse(b);
}

// Ours against Google Benchmark's, member by member, less the "cubench" member that ends ours.
void expect_google_benchmarks_members(const GbRun& run) {
  const auto ours = members_of(member_lines(json_row(run), 6));
  const auto theirs = members_of(google_benchmark_members(run));
  ASSERT_FALSE(ours.empty());
  EXPECT_EQ(ours.back().first, "cubench");
  ASSERT_EQ(ours.size(), theirs.size() + 1);
  for (std::size_t i = 0; i < theirs.size(); ++i) {
    EXPECT_EQ(ours[i].first, theirs[i].first);
    EXPECT_TRUE(same_value(ours[i].second, theirs[i].second))
        << ours[i].first << ": " << ours[i].second << " against " << theirs[i].second;
  }
}

TEST(ResultJson, RowsHaveGoogleBenchmarksMembersInItsOrderAndItsValues) {
  forget_rows();  // rows of no record: their counters are Google Benchmark's, as its reporter's
  GbRun iteration = run_of("result_json_test/a", "a \"quoted\" label\twith\na line; 5 µs");
  expect_google_benchmarks_members(iteration);

  GbRun mean = run_of("result_json_test/a", "");
  mean.run_type = GbRun::RT_Aggregate;
  mean.aggregate_name = "mean";
  mean.run_name.str();
  expect_google_benchmarks_members(mean);
  GbRun cv = mean;
  cv.aggregate_name = "cv";
  cv.aggregate_unit = benchmark::kPercentage;
  cv.real_accumulated_time = 0.0123;
  expect_google_benchmarks_members(cv);

  GbRun failed = run_of("result_json_test/b", "");
  failed.counters.clear();
  failed.iterations = 0;
  mark_run_failed(failed, "result_json_test/b: cuBLAS said no", /*skip=*/false);
  expect_google_benchmarks_members(failed);
}

TEST(ResultJson, AnIterationRowsCountersAreItsRecords) {
  forget_rows();
  RowRecord record;
  record.counters = {{"samples", 12}, {"TFLOPS", 300}};
  append_row("result_json_test/a", 17, record);
  append_row("result_json_test/a", 17, record);  // repetition 1
  const Json row = json_row(run_of("result_json_test/a", ""));
  std::vector<std::string> names;
  for (const auto& [name, value] : row.items()) names.push_back(name);
  ASSERT_GE(names.size(), 3u);
  EXPECT_EQ(std::vector<std::string>(names.end() - 3, names.end()),
            (std::vector<std::string>{"TFLOPS", "samples", "cubench"}));
  EXPECT_EQ(row["TFLOPS"], 300.0);
  EXPECT_EQ(row["samples"], 12.0);
  EXPECT_FALSE(row.contains("rel_error"));
  forget_rows();
}

// The layout: one member a line, values on one line spaced as json.dumps spaces them, and a
// number that is not finite as Google Benchmark writes it (a counter of NaN stays a number).
TEST(ResultJson, MembersAreLaidOutOneALineAndNaNStaysANumber) {
  Json row = Json::object();
  row["name"] = "a\tb";
  row["nan"] = std::numeric_limits<double>::quiet_NaN();
  row["minus_infinity"] = -std::numeric_limits<double>::infinity();
  row["cubench"] = Json{{"notes", Json::array({Json{{"kind", "stop"}, {"pct", 100}}})},
                        {"axis_values", Json::object()}};
  EXPECT_EQ(
      member_lines(row, 2),
      "  \"name\": \"a\\tb\",\n  \"nan\": NaN,\n  \"minus_infinity\": -Infinity,\n"
      "  \"cubench\": {\"notes\": [{\"kind\": \"stop\", \"pct\": 100}], \"axis_values\": {}}");
  EXPECT_EQ(one_line(Json::array({std::numeric_limits<double>::quiet_NaN(), 1.5, "\xff"})),
            "[null, 1.5, \"\xef\xbf\xbd\"]");  // no NaN in JSON; bytes not UTF-8 replaced
}

// Google Benchmark's context, which result_json builds as an object of the same facts: the
// members its own reporter writes, in its order, with its values (the date aside: a second may
// pass between the two).
TEST(ResultJson, TheContextHoldsGoogleBenchmarksMembersAsItsReporterWritesThem) {
  benchmark::AddCustomContext("result_json_test_key", "a \"quoted\" value");
  const benchmark::BenchmarkReporter::Context context;
  std::ostringstream out, err;
  benchmark::JSONReporter json;
  json.SetOutputStream(&out);
  json.SetErrorStream(&err);
  ASSERT_TRUE(json.ReportContext(context));
  const Json theirs = Json::parse(out.str() + "]}")["context"];
  const Json ours = google_benchmark_context(context);
  std::vector<std::string> their_names, our_names;
  for (const auto& [name, value] : theirs.items()) their_names.push_back(name);
  for (const auto& [name, value] : ours.items()) our_names.push_back(name);
  EXPECT_EQ(our_names, their_names);
  for (const auto& [name, value] : theirs.items()) {
    if (name != "date") {
      EXPECT_EQ(ours[name], value) << name;
    }
  }
  EXPECT_EQ(ours["date"].get<std::string>().size(), theirs["date"].get<std::string>().size());
  EXPECT_EQ(ours["result_json_test_key"], "a \"quoted\" value");
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Whether `text` is one whole JSON document as far as its brackets go: every one closed, in order,
// none inside a string counted, nothing after the last.
bool whole_document(const std::string& text) {
  std::string open;
  bool in_string = false;
  std::size_t last = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"')
      in_string = true;
    else if (c == '{' || c == '[')
      open += c;
    else if (c == '}' || c == ']') {
      if (open.empty() || open.back() != (c == '}' ? '{' : '[')) return false;
      open.pop_back();
      if (open.empty()) last = i;
    }
  }
  return open.empty() && !in_string && text.find_first_not_of(" \n", last + 1) == std::string::npos;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(ResultJson, AFileIsAWholeDocumentAfterEveryRowAndAnInterruptedOneIsWrittenAgainMarked) {
  forget_rows();
  const std::string path = testing::TempDir() + "cubench_result_json.json";
  std::ofstream file(path);
  std::ostringstream err;
  ResultJson json(/*rewrite_tail=*/true);
  json.SetOutputStream(&file);
  json.SetErrorStream(&err);
  ASSERT_TRUE(json.ReportContext(benchmark::BenchmarkReporter::Context()));
  std::string text = read_file(path);
  EXPECT_TRUE(whole_document(text)) << text;
  EXPECT_NE(text.find("\"cubench_schema\": {\"version\": "), std::string::npos);  // an object
  const std::string empty_list = "\"benchmarks\": [\n\n  ]\n}\n";
  EXPECT_EQ(text.substr(text.size() - empty_list.size()), empty_list) << text;

  json.ReportRuns({run_of("result_json_test/a", "first")});
  text = read_file(path);
  EXPECT_TRUE(whole_document(text)) << text;
  EXPECT_EQ(count(text, "\"run_type\": "), 1u) << text;
  json.ReportRuns({run_of("result_json_test/b", "second"), run_of("result_json_test/c", "")});
  text = read_file(path);
  EXPECT_TRUE(whole_document(text)) << text;
  EXPECT_EQ(count(text, "\"run_type\": "), 3u) << text;
  EXPECT_EQ(count(text, "\n    },\n    {\n"), 2u) << text;
  json.Finalize();
  file.close();
  const std::string finished = read_file(path);
  EXPECT_EQ(finished, text);  // the closing text was there already

  ASSERT_TRUE(json.rewrite_interrupted(path, "SIGINT"));
  const std::string marked = read_file(path);
  EXPECT_EQ(marked.rfind("{\n  \"context\": {\n    \"interrupted\": \"SIGINT\",\n", 0), 0u)
      << marked;
  EXPECT_TRUE(whole_document(marked)) << marked;
  EXPECT_EQ(marked.substr(marked.find("  \"benchmarks\": [")),
            finished.substr(finished.find("  \"benchmarks\": [")));
  EXPECT_FALSE(json.rewrite_interrupted(testing::TempDir() + "no/such/folder/x.json", "SIGINT"));
  std::remove(path.c_str());
}

TEST(ResultJson, OnAStreamThatCannotSeekTheDocumentClosesOnceAtTheEnd) {
  forget_rows();
  std::ostringstream out, err;
  ResultJson json(/*rewrite_tail=*/false);
  json.SetOutputStream(&out);
  json.SetErrorStream(&err);
  ASSERT_TRUE(json.ReportContext(benchmark::BenchmarkReporter::Context()));
  json.ReportRuns({run_of("result_json_test/a", "")});
  EXPECT_FALSE(whole_document(out.str()));
  json.Finalize();
  EXPECT_TRUE(whole_document(out.str())) << out.str();
  EXPECT_EQ(count(out.str(), "\n  ]\n}\n"), 1u);
}

}  // namespace
}  // namespace cubench
