# libFuzzer targets (the `fuzz` preset: clang-19 with -fsanitize=fuzzer-no-link,address,undefined
# for every library, see CMakePresets.json; tools/setup.sh --fuzz installs the toolchain).
#
#   faultline_add_fuzzer(NAME SOURCES a.cc b.cc LIBS faultline::ref ...)
#
# adds the executable NAME, linked with libFuzzer's main (-fsanitize=fuzzer), and makes the
# `faultline_fuzzers` target build it. Every folder keeps its targets in <folder>/fuzz/ and adds
# them from its own CMakeLists.txt under if(FAULTLINE_BUILD_FUZZERS). tools/fuzz.sh builds
# `faultline_fuzzers` and runs each target on its seed corpus (build/fuzz/corpus/NAME/), which
# `faultline_fuzz_corpus` writes (fuzz/write_corpus.cc).
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "FAULTLINE_BUILD_FUZZERS needs clang (libFuzzer): use the `fuzz` preset")
endif()

if(NOT TARGET faultline_fuzzers)
  add_custom_target(faultline_fuzzers)
endif()

function(faultline_add_fuzzer name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES;LIBS")
  if(NOT arg_SOURCES)
    message(FATAL_ERROR "faultline_add_fuzzer(${name}): SOURCES is required")
  endif()
  add_executable(${name} ${arg_SOURCES})
  target_link_libraries(${name} PRIVATE ${arg_LIBS})
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  add_dependencies(faultline_fuzzers ${name})
endfunction()
