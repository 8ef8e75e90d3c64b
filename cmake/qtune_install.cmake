# Install rules and the CMake package (docs/cmake.md): `cmake --install` puts the qtune
# libraries, the public headers (include/qtune/*.h), the `qtune` binary, the library's
# measuring child (libexec/qtune/qtune-measure) and qtuneConfig.cmake in place, so another project can do
#
#   find_package(qtune REQUIRED)
#   target_link_libraries(app PRIVATE qtune::qtune)   # then #include <qtune/qtune.h>
#
# Contract: qtune::qtune is the public C++ API (include/qtune/, src/api/): its headers, on
# the include path as <qtune/...>, are the whole supported surface. They use core's value
# types (Status, StatusOr, Tensor, DataType), so those four headers are installed too, under
# include/qtune/internal/core/ (on the include path as "core/...", which is how the public
# headers and they themselves include them); no other internal header is installed
# (tests/packaging/install_consumer_test.sh checks the list). The module libraries
# (qtune::core, ir, passes, runtime, quant, measure, autotune, tune: static, the module diagram of
# ARCHITECTURE.md) are exported because qtune::qtune links them, not for direct use.
# qtuneConfig.cmake finds their dependencies with find_dependency
# (cmake/qtuneConfig.cmake.in); the list there, and the Requires/Libs of
# lib/pkgconfig/qtune.pc (cmake/qtune.pc.in), must follow the target_link_libraries lines
# of src/*/CMakeLists.txt.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(QTUNE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/qtune)
set(_qtune_modules core ir passes runtime quant measure autotune tune api)
# The internal headers the public ones include (directly or through each other).
set(_qtune_internal_headers core/status.h core/tensor.h core/dtype.h core/check.h)
set(QTUNE_INSTALL_INTERNAL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/qtune/internal)

foreach(_module IN LISTS _qtune_modules)
  set_target_properties(qtune_${_module} PROPERTIES EXPORT_NAME ${_module})
endforeach()
# The modules declare `${PROJECT_SOURCE_DIR}/src` as their include directory. Installed,
# only core's has headers (the four above); the others have none to offer.
set_target_properties(qtune_core PROPERTIES INTERFACE_INCLUDE_DIRECTORIES
  "$<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/src>;$<INSTALL_INTERFACE:${QTUNE_INSTALL_INTERNAL_INCLUDEDIR}>")
foreach(_module ir passes runtime quant measure autotune tune)
  set_target_properties(qtune_${_module} PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "$<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/src>")
endforeach()
set_target_properties(qtune_api PROPERTIES INTERFACE_INCLUDE_DIRECTORIES
  "$<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>;$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>")

# qtune::qtune: everything a user links.
add_library(qtune_package INTERFACE)
set_target_properties(qtune_package PROPERTIES EXPORT_NAME qtune)
target_link_libraries(qtune_package INTERFACE qtune_api)
add_library(qtune::qtune ALIAS qtune_package)

list(TRANSFORM _qtune_modules PREPEND qtune_ OUTPUT_VARIABLE _qtune_targets)
install(TARGETS ${_qtune_targets} qtune_package
        EXPORT qtuneTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS qtune RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The measuring child the library starts (src/measure/measure_executable.h), where it looks.
install(TARGETS qtune_measure_exe RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/qtune)

# Headers: the public ones, and the internal ones they need (see the contract above).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/qtune DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
foreach(_header IN LISTS _qtune_internal_headers)
  get_filename_component(_dir ${_header} DIRECTORY)
  install(FILES ${PROJECT_SOURCE_DIR}/src/${_header}
          DESTINATION ${QTUNE_INSTALL_INTERNAL_INCLUDEDIR}/${_dir})
endforeach()

install(EXPORT qtuneTargets NAMESPACE qtune:: DESTINATION ${QTUNE_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/qtuneConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/qtuneConfig.cmake
                              INSTALL_DESTINATION ${QTUNE_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/qtuneConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/qtuneConfig.cmake ${PROJECT_BINARY_DIR}/qtuneConfigVersion.cmake
        DESTINATION ${QTUNE_INSTALL_CMAKEDIR})

# pkg-config file (cmake/qtune.pc.in, docs/cmake.md): <libdir>/pkgconfig/qtune.pc. Its prefix
# is the path from that folder back to the install prefix, so the file works under any
# `cmake --install --prefix` and after the tree is moved. An absolute CMAKE_INSTALL_LIBDIR or
# INCLUDEDIR is written as given (that tree cannot be moved).
set(QTUNE_PKGCONFIG_INSTALLDIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(QTUNE_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _qtune_pc_up "/qtune-prefix/${QTUNE_PKGCONFIG_INSTALLDIR}" "/qtune-prefix")
  string(REGEX REPLACE "/$" "" _qtune_pc_up "${_qtune_pc_up}")  # "../../" -> "../.."
  set(QTUNE_PC_PREFIX "\${pcfiledir}/${_qtune_pc_up}")
endif()
foreach(_dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_dir}}")
    set(QTUNE_PC_${_dir} "${CMAKE_INSTALL_${_dir}}")
  else()
    set(QTUNE_PC_${_dir} "\${prefix}/${CMAKE_INSTALL_${_dir}}")
  endif()
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/cmake/qtune.pc.in ${PROJECT_BINARY_DIR}/qtune.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/qtune.pc DESTINATION ${QTUNE_PKGCONFIG_INSTALLDIR})
