# faultline_check_sans_io(FOLDER [WINGS WING...]): the files at the top of FOLDER and in its core
# wings (FOLDER/WING/, the sub-folders of the sans-I/O core) must not include its driver
# (FOLDER/server/) or Asio's I/O; configuring fails, naming the file, when one does. The driver
# lives in FOLDER/server/ and may include anything.
function(faultline_check_sans_io folder)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "WINGS")
  set(patterns "${PROJECT_SOURCE_DIR}/${folder}/*.cc" "${PROJECT_SOURCE_DIR}/${folder}/*.h")
  foreach(wing IN LISTS arg_WINGS)
    list(APPEND patterns "${PROJECT_SOURCE_DIR}/${folder}/${wing}/*.cc"
         "${PROJECT_SOURCE_DIR}/${folder}/${wing}/*.h")
  endforeach()
  file(GLOB core_files CONFIGURE_DEPENDS ${patterns})
  foreach(core_file IN LISTS core_files)
    file(STRINGS "${core_file}" server_includes REGEX
                 "#include [\"<](${folder}/server/|boost/asio/(ip|io_context|steady_timer|awaitable))")
    if(server_includes)
      message(FATAL_ERROR "${core_file}: the sans-I/O core of ${folder}/ must not include its "
                          "driver or Asio's I/O (${server_includes}); move the code to ${folder}/server/")
    endif()
  endforeach()
endfunction()
