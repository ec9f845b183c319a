# The contract's proof: a family the tools have never seen (tests/throwaway_family.cpp: axes
# shape and n, counter widgets_per_s) comes out in compare's table and in a chart of its own,
# from the schema its result files carry, with no tool change. Two runs of the same binary.
#   -DBINARY=cubench_throwaway -DTOOLS=<tools/> -DOUT=<dir>
file(REMOVE_RECURSE "${OUT}")
file(MAKE_DIRECTORY "${OUT}")
foreach(run a b)
  execute_process(COMMAND "${BINARY}" --benchmark_repetitions=3 --benchmark_min_time=0.01
                          --benchmark_report_aggregates_only=false
                          "--benchmark_out=${OUT}/${run}.json" --benchmark_out_format=json
                  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "run ${run}: exit ${code}:\n${out}\n${err}")
  endif()
endforeach()
file(READ "${OUT}/a.json" json)
# Google Benchmark writes a counter's cv aggregate as nan where its mean is 0 (sample_cv of
# one-sample repetitions, on a loaded machine): not JSON, so CMake's strict parser would stop.
string(REGEX REPLACE ": -?([Nn]a[Nn]|[Ii]nf(inity)?)" ": null" json "${json}")
string(JSON schema ERROR_VARIABLE no_schema GET "${json}" context cubench_schema)
if(no_schema)
  message(FATAL_ERROR "no cubench_schema in the JSON context: ${no_schema}")
endif()
string(JSON unit GET "${schema}" counters widgets_per_s unit)
string(JSON axis GET "${schema}" families throwaway/widgets axes 0 name)
if(NOT unit STREQUAL "widget/s" OR NOT axis STREQUAL "shape")
  message(FATAL_ERROR "the schema does not describe the family: unit '${unit}', axis '${axis}'")
endif()
if(out MATCHES "cubench_schema")
  message(FATAL_ERROR "the console shows the schema (it belongs in the JSON only):\n${out}")
endif()

execute_process(COMMAND "${TOOLS}/compare" --table "${OUT}/a.json" "${OUT}/b.json"
                RESULT_VARIABLE code OUTPUT_VARIABLE table ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "compare --table: exit ${code}:\n${table}\n${err}")
endif()
foreach(want "widgets_per_s" "throwaway/widgets/square/1600000")
  if(NOT table MATCHES "${want}")
    message(FATAL_ERROR "compare's table has no ${want}:\n${table}")
  endif()
endforeach()

execute_process(COMMAND "${TOOLS}/plot" --out-dir "${OUT}/plots" "${OUT}/a.json" "${OUT}/b.json"
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0 OR NOT EXISTS "${OUT}/plots/throwaway_widgets.png")
  message(FATAL_ERROR "plot: exit ${code}, no throwaway_widgets.png:\n${out}\n${err}")
endif()
file(SIZE "${OUT}/plots/throwaway_widgets.png" bytes)
if(bytes LESS 5000)
  message(FATAL_ERROR "throwaway_widgets.png is ${bytes} bytes: an empty chart?")
endif()
message(STATUS "table:\n${table}")
