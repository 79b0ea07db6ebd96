# check_sources.cmake - cmake -DSRC=<root> -DREPORTS_LIB=<libllmsim_reports.a>
# -DNM=<nm> -P check_sources.cmake: the source rules the layers rest on.
#  - no source includes a header by a path with "..": every other part is
#    included from the repository root, which only the include path of the
#    parts above may resolve;
#  - reports/ calls no simulator: none of the walkers', the op model's or
#    the calibration scoring's entry points is undefined in its objects.
file(GLOB_RECURSE srcs ${SRC}/base/*.[ch] ${SRC}/hw/*.[ch] ${SRC}/models/*.[ch]
  ${SRC}/sim/*.[ch] ${SRC}/calib/*.[ch] ${SRC}/reports/*.[ch] ${SRC}/cli/*.[ch]
  ${SRC}/kernels/*.[ch] ${SRC}/kernels/*.cu ${SRC}/bench/*.[ch] ${SRC}/fuzz/*.[ch]
  ${SRC}/tests/*.[ch])
set(bad "")
foreach(f ${srcs})
  file(STRINGS ${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"[^\"]*\\.\\./")
  if(lines)
    file(RELATIVE_PATH rel ${SRC} ${f})
    list(APPEND bad "${rel}: ${lines}")
  endif()
endforeach()
if(bad)
  list(JOIN bad "\n" text)
  message(FATAL_ERROR "includes with '..' (include other parts from the root):\n${text}")
endif()

execute_process(COMMAND ${NM} -u ${REPORTS_LIB} OUTPUT_VARIABLE undef RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} -u ${REPORTS_LIB} failed")
endif()
set(sims llmsim_predict llmsim_graph_build llmsim_graph_price llmsim_train_simulate
  llmsim_train_step_ops llmsim_plan_run llmsim_infer_step llmsim_infer_step_ops
  llmsim_infer_run llmsim_serve_run llmsim_plan_serve llmsim_spec_run llmsim_calib_predict
  llmsim_calib_validate llmsim_calib_validate_cases llmsim_measured_load llmsim_trace_compare)
foreach(s ${sims})
  if(undef MATCHES "[ \t]U ${s}\n")
    message(FATAL_ERROR "reports/ calls ${s}: reports draw results, the caller simulates")
  endif()
endforeach()
message(STATUS "sources: no '..' includes; reports/ calls no simulator")
