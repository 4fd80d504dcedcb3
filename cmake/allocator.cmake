# faultline_use_allocator(<target>...): links the chosen malloc into the binary users run and the
# benchmarks that measure it, so a benchmark's figure is the binary's.
#
# Why: judging a run and serving a stream are allocation-heavy (JSON values, strings of a few
# dozen bytes, the journal's entries), and glibc's malloc spends its time there consolidating
# freed chunks. Measured on the catalogue in virtual time (`faultline run --time virtual
# --no-reports`, same binary, allocator preloaded): jemalloc cost 0.68x the CPU of glibc's malloc;
# `faultline serve` on the 25-event stream 0.92x the CPU per stream. tcmalloc was as fast but held
# 27% more memory on 100,000 runs; jemalloc 5% more.
#
# FAULTLINE_ALLOCATOR: "jemalloc" (Debian's libjemalloc-dev; the release preset) or "system". The
# sanitizer and fuzz presets keep the system's: their runtimes replace malloc themselves.
set(FAULTLINE_ALLOCATOR "system" CACHE STRING "malloc of the faultline binary: jemalloc | system")
set_property(CACHE FAULTLINE_ALLOCATOR PROPERTY STRINGS jemalloc system)
if(FAULTLINE_ALLOCATOR STREQUAL "jemalloc")
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(JEMALLOC REQUIRED IMPORTED_TARGET jemalloc)
elseif(NOT FAULTLINE_ALLOCATOR STREQUAL "system")
  message(FATAL_ERROR "FAULTLINE_ALLOCATOR is '${FAULTLINE_ALLOCATOR}': use jemalloc or system")
endif()

function(faultline_use_allocator)
  if(FAULTLINE_ALLOCATOR STREQUAL "jemalloc")
    foreach(target IN LISTS ARGN)
      target_link_libraries(${target} PRIVATE PkgConfig::JEMALLOC)
    endforeach()
  endif()
endfunction()
