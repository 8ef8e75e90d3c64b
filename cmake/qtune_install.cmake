# Install rules and the CMake package (docs/cmake.md): `cmake --install` puts the qtune
# libraries, every header under src/ (as include/qtune/<module>/...), the `qtune` binary
# and qtuneConfig.cmake in place, so another project can do
#
#   find_package(qtune REQUIRED)
#   target_link_libraries(app PRIVATE qtune::qtune)
#
# Contract: the exported targets are qtune::core, ir, passes, runtime, quant, autotune,
# tune (static libraries, the module diagram of ARCHITECTURE.md) and qtune::qtune, an
# interface target that links them all. qtuneConfig.cmake finds their dependencies with
# find_dependency (cmake/qtuneConfig.cmake.in); the list there, and the Requires/Libs of
# lib/pkgconfig/qtune.pc (cmake/qtune.pc.in), must follow the target_link_libraries lines
# of src/*/CMakeLists.txt.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(QTUNE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/qtune)
set(_qtune_modules core ir passes runtime quant autotune tune)

foreach(_module IN LISTS _qtune_modules)
  set(_target qtune_${_module})
  # The modules declare `${PROJECT_SOURCE_DIR}/src` as their include directory; an
  # installed tree has it at include/qtune. Rewrite the property for both cases here so the
  # module CMakeLists stay as they are.
  set_target_properties(${_target} PROPERTIES
    EXPORT_NAME ${_module}
    INTERFACE_INCLUDE_DIRECTORIES
      "$<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/src>;$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/qtune>")
endforeach()

# qtune::qtune: everything a user links (tune pulls in the modules below it).
add_library(qtune_package INTERFACE)
set_target_properties(qtune_package PROPERTIES EXPORT_NAME qtune)
target_link_libraries(qtune_package INTERFACE qtune_tune)
add_library(qtune::qtune ALIAS qtune_package)

list(TRANSFORM _qtune_modules PREPEND qtune_ OUTPUT_VARIABLE _qtune_targets)
install(TARGETS ${_qtune_targets} qtune_package
        EXPORT qtuneTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS qtune RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# Headers: every module's, since the public ones include internal ones (session.h includes
# runtime/compile.h, ...). The directory layout is kept: #include "runtime/session.h".
foreach(_module IN LISTS _qtune_modules)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/src/${_module}
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/qtune
          FILES_MATCHING PATTERN "*.h")
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
