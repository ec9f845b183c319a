#pragma once
// A case's life as the runner leads it, for tests that drive one by hand: find a registered case,
// set it up and run it once, plant its fault and require the check it names to reject it (its check
// having accepted the result without the fault). One place, so every test drives a case the same
// way the runner does (prepare before each run, the stream drained before the host reads) and
// judges a planted fault the same way.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "fixtures/case/benchmark_case.h"
#include "fixtures/detail/case/registry.h"
#include "fixtures/device/env.h"
#include "fixtures/support/status.h"

namespace cubench {

// The registered case named `name` (as registered: "svd/gesvd/fp32/4096", no "/manual_time");
// nullptr, with a test failure, where this build has none.
inline const Spec* find_spec(const std::string& name) {
  for (const Spec& s : registered_specs())
    if (s.name == name) return &s;
  ADD_FAILURE() << name << " is not registered in this build";
  return nullptr;
}

// One run as the runner makes the one it checks: the result poisoned, prepare(), run(), and on a
// GPU the stream drained.
inline void run_once(BenchmarkCase& c, Env& env) {
  c.poison_result(env);
  c.prepare(env);
  c.run(env);
  if (env.has_gpu()) CUBENCH_CUDA(cudaStreamSynchronize(env.stream()));
}

// Set-up, one run, and its check, as the runner does before timing (throws what they throw).
inline void set_up_run_and_check(BenchmarkCase& c, Env& env) {
  c.setup(env);
  run_once(c, env);
  c.validate(env);
}

// What a planted fault came to.
struct PlantedFault {
  std::string fault;        // its words ("" when the case plants none)
  std::string check;        // the check that must reject it, as the case names it (fault_check)
  bool caught = false;      // rejected by that check
  std::string rejected_by;  // the check that rejected it, as its ValidationError names it
  std::string rejection;    // the rejection's words
  std::string failure;      // why this is no catch: "" when caught, or when no fault was planted
  // The result without a fault was a known inaccuracy of the library (KnownInaccuracy: reported
  // in a run, never timed): no fault can be judged there; its words.
  std::string known_inaccuracy;
};

// A judged fault in a test: its failure a test failure, its catch a "[ CAUGHT ] label: fault ->
// check: rejection" line.
inline void report_planted_fault(const std::string& label, const PlantedFault& p) {
  if (!p.failure.empty()) ADD_FAILURE() << label << ": " << p.failure;
  if (p.caught)
    std::cout << "[ CAUGHT ] " << label << ": " << p.fault << " -> " << p.rejected_by << ": "
              << p.rejection.substr(0, 400) << "\n";
}

// A check as a message names it.
inline std::string describe_check(const std::string& check) {
  return check.empty() ? std::string("a check that gives no name") : "the check \"" + check + "\"";
}

// The judgement of a planted fault, apart from Google Test (so a test can inspect it): the case's
// check must accept its last result as it stands; then, with the case's fault planted in it, it
// must throw a ValidationError from the check the case names for it (fault_check), in words that
// contain `caught_by` where given. Anything else is a failure, said in `failure`: the result
// without a fault rejected (by which check, in its words), the fault accepted, excused as a known
// inaccuracy, rejected by another check (or one that gives no name), or met by another exception.
// An exception other than a ValidationError from the first check propagates, as set-up's do (a
// configuration not supported here is the caller's to judge).
// `judge_clean` false: the result at hand is not a clean one (the last fault's, where the case's
// fault makes its own run) and is not judged.
// `clean_counters`, where given: the case's counters right after the clean result's check (its
// checks' clean figures, before a fault moves them).
inline PlantedFault judge_planted_fault(BenchmarkCase& c, Env& env,
                                        const std::string& caught_by = "", bool judge_clean = true,
                                        std::map<std::string, double>* clean_counters = nullptr) {
  PlantedFault out;
  try {
    if (judge_clean) c.validate(env);
    if (judge_clean && clean_counters) *clean_counters = c.counters(1.0);
  } catch (const KnownInaccuracy& e) {
    out.known_inaccuracy = e.what();
    return out;
  } catch (const ValidationError& e) {
    out.rejected_by = e.check();
    out.rejection = e.what();
    out.failure = "the result without a fault was rejected, by " + describe_check(e.check()) +
                  ": " + out.rejection;
    return out;
  }
  out.fault = c.plant_fault(env);
  if (out.fault.empty()) return out;
  out.check = c.fault_check();
  try {
    c.validate(env);
    out.failure = "the check accepted a planted fault: " + out.fault;
  } catch (const KnownInaccuracy& e) {
    // Excused as a library's documented miss: not a catch of the fault (gesvdp fp32's miss has a
    // signature the planted faults do not share).
    out.rejected_by = e.check();
    out.rejection = e.what();
    out.failure =
        "a planted fault passed for a known inaccuracy: " + out.fault + " -> " + out.rejection;
  } catch (const ValidationError& e) {
    out.rejected_by = e.check();
    out.rejection = e.what();
    if (out.check.empty())
      out.failure =
          "the case names no check that must catch its fault (fault_check): " + out.fault +
          " was rejected by " + describe_check(e.check()) + ": " + out.rejection;
    else if (e.check() != out.check)
      out.failure = "the fault (" + out.fault + ") was rejected by " + describe_check(e.check()) +
                    ", not by " + describe_check(out.check) +
                    ", which must catch it: " + out.rejection;
    else if (!caught_by.empty() && out.rejection.find(caught_by) == std::string::npos)
      out.failure = "the fault (" + out.fault + ") was rejected by " + describe_check(e.check()) +
                    ", but not in words that say \"" + caught_by + "\": " + out.rejection;
    else
      out.caught = true;
  } catch (const std::exception& e) {
    out.failure = "the check of a planted fault (" + out.fault +
                  ") threw something other than a ValidationError: " + e.what();
  }
  if (env.has_gpu()) CUBENCH_CUDA(cudaStreamSynchronize(env.stream()));
  return out;
}

// judge_planted_fault as a test: its failure is a test failure; a catch prints
// "[ CAUGHT ] label: <fault> -> <check>: <rejection>", the rejection's first 400 characters (room
// for the figures a check gives, which show a GPU run's margin against its bounds).
inline PlantedFault plant_fault_and_check(BenchmarkCase& c, Env& env, const std::string& label,
                                          const std::string& caught_by = "") {
  PlantedFault out = judge_planted_fault(c, env, caught_by);
  report_planted_fault(label, out);
  return out;
}

}  // namespace cubench

namespace cubench {

// The words of the fault every case with a result meets whatever its own: the timed call's result
// left as poison_result() leaves it, no run after it (a timed call that does nothing, a check that
// judges a recomputation of its own instead of what was timed).
constexpr const char* kUnwrittenResult =
    "the result poisoned and no run after it (a timed call that writes nothing)";

// Every fault the case plants (fault_count() of them, one after another, a clean run before each
// but the first: the case's check must accept the result first) and then the unwritten result,
// each judged as judge_planted_fault judges one; the unwritten result must be rejected by a check
// of any name. The first failure of the clean result ends the list (nothing after it could be
// judged).
inline std::vector<PlantedFault> judge_every_fault(
    BenchmarkCase& c, Env& env, std::map<std::string, double>* clean_counters = nullptr) {
  std::vector<PlantedFault> out;
  const int faults = c.fault_count();
  for (int i = 0; i < faults; ++i) {
    // A clean run before each fault but the first, unless the fault makes its own (then the result
    // at hand is the last fault's, not judged clean again).
    const bool clean_run = i == 0 || !c.fault_makes_its_own_run();
    if (i > 0 && clean_run) run_once(c, env);
    out.push_back(judge_planted_fault(c, env, "", clean_run, i == 0 ? clean_counters : nullptr));
    const PlantedFault& last = out.back();
    if (!last.known_inaccuracy.empty() || (!last.failure.empty() && last.fault.empty())) return out;
    if (last.fault.empty()) break;  // no result to corrupt (launch/empty)
  }
  if (out.empty() || out.front().fault.empty()) return out;
  PlantedFault unwritten;
  unwritten.fault = kUnwrittenResult;
  const std::string passes = c.why_unwritten_result_passes();
  if (!passes.empty()) {
    std::cout << "[ UNWRITTEN RESULT NOT JUDGED ] " << passes << "\n";
    return out;
  }
  run_once(c, env);
  c.poison_result(env);
  if (env.has_gpu()) CUBENCH_CUDA(cudaStreamSynchronize(env.stream()));
  try {
    c.validate(env);
    unwritten.failure = std::string("the check accepted ") + kUnwrittenResult +
                        ": it does not judge what the timed call wrote";
  } catch (const ValidationError& e) {
    unwritten.caught = true;
    unwritten.rejected_by = e.check();
    unwritten.check = e.check();
    unwritten.rejection = e.what();
  } catch (const std::exception& e) {
    unwritten.failure = std::string("the check of ") + kUnwrittenResult +
                        " threw something other than a ValidationError: " + e.what();
  }
  if (env.has_gpu()) CUBENCH_CUDA(cudaStreamSynchronize(env.stream()));
  out.push_back(unwritten);
  return out;
}

// judge_every_fault as a test: each failure a test failure, each catch a "[ CAUGHT ]" line.
// The clean result's figures (counters named *_error, *_ratio, *_cosine, *_std) are printed first,
// "[ FIGURES ] label: name value ...", beside the catches' faulted ones.
inline std::vector<PlantedFault> plant_every_fault_and_check(BenchmarkCase& c, Env& env,
                                                             const std::string& label) {
  std::map<std::string, double> clean;
  std::vector<PlantedFault> out = judge_every_fault(c, env, &clean);
  std::string figures;
  for (const auto& [name, value] : clean)
    for (const char* kind : {"_error", "_ratio", "_cosine", "_std"})
      if (name.size() > std::strlen(kind) &&
          name.compare(name.size() - std::strlen(kind), std::string::npos, kind) == 0) {
        char text[32];
        std::snprintf(text, sizeof text, "%.3g", value);
        figures += " " + name + " " + text;
      }
  if (!figures.empty()) std::cout << "[ FIGURES ] " << label << " (clean):" << figures << "\n";
  for (const PlantedFault& p : out) report_planted_fault(label, p);
  return out;
}

}  // namespace cubench
