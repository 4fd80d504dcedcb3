# faultline_unity(<target>...): compiles each library in unity batches when FAULTLINE_UNITY is on
# (the release preset, which the README's commands and CI build). A cold build of the `faultline`
# binary is mostly the same headers (nlohmann, fmt, the standard library, CLI11, Asio/Beast)
# parsed and their templates instantiated and optimised again in every file; a batch does that
# once for its files. Generated sources (the embedded catalogue, presets, schemas) stay apart:
# they are data, cheap to compile, and their generated names repeat.
#
# What it asks of the code: a name at file scope with internal linkage (in an anonymous namespace
# or static) must be unique in its library, and a .cc file leaves no macro defined behind it. The
# dev preset builds file by file; the release preset finds a collision as a redefinition.
option(FAULTLINE_UNITY "Compile each library in unity batches (faster cold builds)" OFF)
set(FAULTLINE_UNITY_BATCH_SIZE 8 CACHE STRING "Source files per unity batch")

function(faultline_unity)
  if(NOT FAULTLINE_UNITY)
    return()
  endif()
  foreach(target IN LISTS ARGN)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON
                                               UNITY_BUILD_BATCH_SIZE ${FAULTLINE_UNITY_BATCH_SIZE})
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      # A class of the library's (a pimpl's Impl, a coroutine's frame) may hold a type of its own
      # file's anonymous namespace. Compiled alone, that file is the main file and GCC is silent;
      # included into a batch it is not, and GCC warns as it would for a header shared by files.
      target_compile_options(${target} PRIVATE -Wno-subobject-linkage)
    endif()
    get_target_property(sources ${target} SOURCES)
    foreach(source IN LISTS sources)
      if(source MATCHES "^${CMAKE_BINARY_DIR}")
        set_source_files_properties(${source} TARGET_DIRECTORY ${target}
                                    PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
      endif()
    endforeach()
  endforeach()
endfunction()
