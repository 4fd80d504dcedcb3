# faultline_embed_files(<out_var> DIR <dir> PATTERNS <glob>... HEADER <include path>
#                       NAMESPACE <ns> FUNCTION <name> OUTPUT <file.cc> COMMENT <text>)
# Adds the build step that embeds every file below DIR matching PATTERNS into OUTPUT (in the
# current binary dir) with cmake/embed_files.cmake, re-run whenever one of them changes, appears
# or is deleted; sets <out_var> to the generated source for the caller's add_library. The one home
# of that step for the scenario catalogue and the policy presets.
function(faultline_embed_files out_var)
  cmake_parse_arguments(arg "" "DIR;HEADER;NAMESPACE;FUNCTION;OUTPUT;COMMENT" "PATTERNS" ${ARGN})
  set(globs "")
  foreach(pattern IN LISTS arg_PATTERNS)
    list(APPEND globs "${arg_DIR}/${pattern}")
  endforeach()
  file(GLOB_RECURSE inputs CONFIGURE_DEPENDS ${globs})
  set(output "${CMAKE_CURRENT_BINARY_DIR}/${arg_OUTPUT}")
  # The list of inputs as a file the step depends on, rewritten only when the list changes: a
  # deleted file leaves every remaining input older than the output, so without it the step
  # would not run again and the binary would keep the deleted file.
  set(listing "${output}.inputs")
  string(REPLACE ";" "\n" listed "${inputs}")
  file(CONFIGURE OUTPUT "${listing}" CONTENT "${listed}\n" @ONLY)
  string(REPLACE ";" "$<SEMICOLON>" patterns "${arg_PATTERNS}")
  set(script "${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake")
  add_custom_command(
    OUTPUT "${output}"
    COMMAND "${CMAKE_COMMAND}" "-DDIR=${arg_DIR}" "-DPATTERNS=${patterns}"
            "-DHEADER=${arg_HEADER}" "-DNAMESPACE=${arg_NAMESPACE}"
            "-DFUNCTION=${arg_FUNCTION}" "-DOUTPUT=${output}" -P "${script}"
    DEPENDS ${inputs} "${listing}" "${script}"
    COMMENT "${arg_COMMENT}"
    VERBATIM)
  set(${out_var} "${output}" PARENT_SCOPE)
endfunction()
