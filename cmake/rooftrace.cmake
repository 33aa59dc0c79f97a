# Helpers shared by every CMakeLists.txt of rooftrace.

# Warnings as errors on project code (never on generated code).
function(rooftrace_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Werror>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra -Werror=all-warnings>)
endfunction()

# find_package() that fails with the Debian package to install.
macro(rooftrace_require_package name debian_packages)
  find_package(${name} ${ARGN})
  if(NOT ${name}_FOUND)
    message(FATAL_ERROR
      "${name} not found: install ${debian_packages} "
      "(scripts/setup.sh installs every dependency).")
  endif()
endmacro()

# Adds every sub-folder of the current source folder that has a
# CMakeLists.txt, so components can add test/bench folders without editing
# a shared list.
function(rooftrace_add_subfolders)
  file(GLOB children RELATIVE ${CMAKE_CURRENT_SOURCE_DIR}
       ${CMAKE_CURRENT_SOURCE_DIR}/*/CMakeLists.txt)
  list(SORT children)
  foreach(child ${children})
    get_filename_component(dir ${child} DIRECTORY)
    add_subdirectory(${dir})
  endforeach()
endfunction()

# rooftrace_test(NAME name SOURCES ... LIBS ... [LABELS ...])
# One GoogleTest executable registered with ctest via gtest_discover_tests.
function(rooftrace_test)
  cmake_parse_arguments(T "" "NAME" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gtest
                        GTest::gtest_main Threads::Threads)
  target_include_directories(${T_NAME} PRIVATE ${PROJECT_SOURCE_DIR}
                             ${CMAKE_BINARY_DIR}/generated)
  target_compile_definitions(${T_NAME} PRIVATE
    ROOFTRACE_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    ROOFTRACE_BINARY_DIR="${CMAKE_BINARY_DIR}")
  set_target_properties(${T_NAME} PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  rooftrace_warnings(${T_NAME})
  gtest_discover_tests(${T_NAME} DISCOVERY_TIMEOUT 60
                       PROPERTIES LABELS "${T_LABELS}")
endfunction()
