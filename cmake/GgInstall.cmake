# What `cmake --install BUILD --prefix PREFIX` installs (GNUInstallDirs names the folders):
#   bin/ggfuzz                        the command line
#   lib/libggfuzz.so                  the harness as one library, for the Python host
#   include/ggfuzz/gg_kernel.h        the kernel ABI, all a plugin includes
#   lib/cmake/ggfuzz/                 find_package(ggfuzz): ggfuzz::kernel_abi, ggfuzz::ggfuzz,
#                                     ggfuzz::libggfuzz and ggfuzz_add_plugin()
#   share/pkgconfig/ggfuzz.pc         pkg-config --cflags ggfuzz: the include directory
#   share/ggfuzz/corpus/              seeds/, mutants/ and suite/ (the tiers)
#   share/ggfuzz/python/ggfuzz/       the Python package (pyproject.toml one level up: pip install)
#   share/ggfuzz/examples/            the example plugins' sources (c/, python/)
#   share/ggfuzz/adapters/            the Python adapters to production GEMMs
# An installed ggfuzz finds the last four relative to itself (fuzz/cli/cli_home.c).
include(CMakePackageConfigHelpers)

install(TARGETS ggfuzz EXPORT ggfuzzTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
set_target_properties(ggfuzz PROPERTIES EXPORT_NAME ggfuzz)
if(TARGET ggfuzz_lib)
  install(TARGETS ggfuzz_lib EXPORT ggfuzzTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  set_target_properties(ggfuzz_lib PROPERTIES EXPORT_NAME libggfuzz)
endif()
install(TARGETS gg_kernel_abi EXPORT ggfuzzTargets)
install(FILES kernels/gg_kernel.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ggfuzz)

# The Python package. Where libggfuzz.so lies relative to it is recorded beside it, so that
# `import ggfuzz` from PREFIX/share/ggfuzz/python finds the library wherever PREFIX moved.
install(DIRECTORY kernels/python/ggfuzz DESTINATION ${GG_INSTALL_DATADIR}/python
        PATTERN __pycache__ EXCLUDE PATTERN *.pyc EXCLUDE)
file(RELATIVE_PATH GG_PYTHON_TO_LIB ${CMAKE_INSTALL_FULL_DATADIR}/ggfuzz/python/ggfuzz
     ${CMAKE_INSTALL_FULL_LIBDIR})
file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/install/_installed.py CONTENT
[["""Written by ggfuzz's `cmake --install`: libggfuzz.so, relative to this package's directory."""

LIBRARY = "@GG_PYTHON_TO_LIB@/libggfuzz.so"
]] @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/install/_installed.py
        DESTINATION ${GG_INSTALL_DATADIR}/python/ggfuzz)

install(FILES kernels/python/pyproject.toml DESTINATION ${GG_INSTALL_DATADIR}/python)
install(DIRECTORY corpus/seeds corpus/mutants corpus/suite DESTINATION ${GG_INSTALL_DATADIR}/corpus)
install(FILES kernels/plugins/example_plugin.c kernels/plugins/CMakeLists.txt
        DESTINATION ${GG_INSTALL_DATADIR}/examples/c)
file(GLOB GG_PY_EXAMPLES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/kernels/python/examples/*.py)
install(FILES ${GG_PY_EXAMPLES} DESTINATION ${GG_INSTALL_DATADIR}/examples/python)
file(GLOB GG_PY_ADAPTERS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/kernels/python/adapters/*.py)
install(FILES ${GG_PY_ADAPTERS} DESTINATION ${GG_INSTALL_DATADIR}/adapters)

# The CMake package and the pkg-config file, both relocatable (paths relative to themselves).
set(GG_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ggfuzz)
install(EXPORT ggfuzzTargets NAMESPACE ggfuzz:: DESTINATION ${GG_CMAKE_DIR})
configure_package_config_file(cmake/ggfuzzConfig.cmake.in
  ${CMAKE_BINARY_DIR}/install/ggfuzzConfig.cmake INSTALL_DESTINATION ${GG_CMAKE_DIR}
  PATH_VARS GG_INSTALL_DATADIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/install/ggfuzzConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/install/ggfuzzConfig.cmake
        ${CMAKE_BINARY_DIR}/install/ggfuzzConfigVersion.cmake cmake/GgPlugin.cmake
        DESTINATION ${GG_CMAKE_DIR})
file(RELATIVE_PATH GG_PC_TO_PREFIX ${CMAKE_INSTALL_FULL_DATADIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" GG_PC_TO_PREFIX "${GG_PC_TO_PREFIX}")
configure_file(cmake/ggfuzz.pc.in ${CMAKE_BINARY_DIR}/install/ggfuzz.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/install/ggfuzz.pc DESTINATION ${CMAKE_INSTALL_DATADIR}/pkgconfig)
