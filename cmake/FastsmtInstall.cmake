# What `cmake --install` puts under a prefix and what `cpack -G DEB` packs (README "Install"):
#   bin/                        the tools (tools/CMakeLists.txt; linked statically with the libraries)
#   include/fastsmt/            the public headers and the common/ headers they include
#   lib/libfastsmt.so.0.x.y     every component and common/ in one shared library (SONAME
#                               libfastsmt.so.0), exporting the ppt_ glm_ dec_ nmt_ smt_ symbols only
#   lib/libfastsmt.a            the same objects as a static library
#   lib/pkgconfig/fastsmt.pc    pkg-config (relocatable: paths relative to the file)
#   lib/cmake/fastsmt/          find_package(fastsmt): fastsmt::fastsmt (shared),
#                               fastsmt::fastsmt_static
#   share/man/man1/             a man page per tool (help2man, tools/CMakeLists.txt)
# The build tree's per-component static libraries (smt_common, fastsmt_glm, ...) stay as they are:
# the tools, tests and benchmarks link those; libfastsmt is made of their objects (compiled once).
if(FASTSMT_FUZZ)
  return() # the fuzz build instruments the component libraries for libFuzzer: nothing to install
endif()
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The libraries libfastsmt is made of, lowest first, and the public headers: those of the
# components built, plus the common/ headers they include (found by following their includes).
set(FASTSMT_LIBRARY_PARTS smt_common)
set(FASTSMT_PUBLIC_HEADERS)
foreach(component probingpt glm decoder nmt)
  if(TARGET fastsmt_${component})
    list(APPEND FASTSMT_LIBRARY_PARTS fastsmt_${component})
    list(APPEND FASTSMT_PUBLIC_HEADERS "${CMAKE_SOURCE_DIR}/${component}/${component}.h")
  endif()
endforeach()
set(_queue ${FASTSMT_PUBLIC_HEADERS})
while(_queue)
  list(POP_FRONT _queue _h)
  file(STRINGS "${_h}" _incs REGEX "^[ \t]*#[ \t]*include[ \t]+\"[^\"]+\"")
  foreach(_inc ${_incs})
    string(REGEX REPLACE ".*\"([^\"]+)\".*" "\\1" _name "${_inc}")
    set(_path "${CMAKE_SOURCE_DIR}/common/${_name}")
    if(NOT EXISTS "${_path}")
      message(FATAL_ERROR "${_h}: includes \"${_name}\", which is not a common/ header: a public "
                          "header may include only common/ headers and system headers")
    endif()
    if(NOT _path IN_LIST FASTSMT_PUBLIC_HEADERS)
      list(APPEND FASTSMT_PUBLIC_HEADERS "${_path}")
      list(APPEND _queue "${_path}")
    endif()
  endforeach()
endwhile()

# The headers as installed, also in the build tree (build/include/fastsmt), so that a target of this
# build linking fastsmt_shared or fastsmt_static includes <fastsmt/glm.h> as an installed user does.
set(FASTSMT_BUILD_INCLUDE "${CMAKE_BINARY_DIR}/include")
file(REMOVE_RECURSE "${FASTSMT_BUILD_INCLUDE}/fastsmt")
foreach(_h ${FASTSMT_PUBLIC_HEADERS})
  configure_file("${_h}" "${FASTSMT_BUILD_INCLUDE}/fastsmt/" COPYONLY)
endforeach()

# The Debian libraries every part needs (what common/CMakeLists.txt and the CUDA paths link), for
# the build (imported targets) and for an installed user (names; Threads and CUDAToolkit are found by
# fastsmtConfig.cmake).
set(_deps_build PkgConfig::XXHASH ZLIB::ZLIB BZip2::BZip2 PkgConfig::LZMA PkgConfig::ZSTD
  Threads::Threads m)
# xxhash is compiled in (XXH_INLINE_ALL, common/smt_hash.h): installed users need no libxxhash.
set(_deps_install "" z bz2 lzma zstd Threads::Threads m)
set(FASTSMT_PC_LIBS_PRIVATE "-lz -lbz2 -llzma -lzstd -pthread -lm")
if(FASTSMT_HAVE_CUDA)
  # nvcc's objects also need the C++ runtime, which a C program's link does not bring (the build
  # links through the CUDA toolchain, hence no build-side entry)
  list(APPEND _deps_build CUDA::cudart CUDA::cublas "")
  list(APPEND _deps_install CUDA::cudart CUDA::cublas stdc++)
  string(APPEND FASTSMT_PC_LIBS_PRIVATE " -L${CUDAToolkit_LIBRARY_DIR} -lcudart -lcublas -lstdc++")
endif()

set(_objects)
foreach(_lib ${FASTSMT_LIBRARY_PARTS})
  list(APPEND _objects "$<TARGET_OBJECTS:${_lib}>")
endforeach()

add_library(fastsmt_shared SHARED ${_objects})
add_library(fastsmt_static STATIC ${_objects})
add_dependencies(fastsmt_shared ${FASTSMT_LIBRARY_PARTS})
add_dependencies(fastsmt_static ${FASTSMT_LIBRARY_PARTS})
set(_export "${CMAKE_CURRENT_LIST_DIR}/fastsmt.map")
set_target_properties(fastsmt_shared PROPERTIES
  OUTPUT_NAME fastsmt EXPORT_NAME fastsmt LINKER_LANGUAGE C
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
  LINK_DEPENDS "${_export}")
set_target_properties(fastsmt_static PROPERTIES
  OUTPUT_NAME fastsmt EXPORT_NAME fastsmt_static LINKER_LANGUAGE C)
# Only the API is exported (fastsmt.map: the five prefixes, version node FASTSMT_0); a shared
# library with an undefined symbol is an error, except under the sanitizers (clang's runtimes are
# linked into programs only).
target_link_options(fastsmt_shared PRIVATE "LINKER:--version-script=${_export}")
if(NOT FASTSMT_SANITIZE)
  target_link_options(fastsmt_shared PRIVATE "LINKER:--no-undefined")
endif()
target_link_libraries(fastsmt_shared PRIVATE ${_deps_build})
set(_static_deps)
foreach(_b _i IN ZIP_LISTS _deps_build _deps_install)
  if(_b)
    list(APPEND _static_deps "$<BUILD_INTERFACE:${_b}>")
  endif()
  if(_i)
    list(APPEND _static_deps "$<INSTALL_INTERFACE:${_i}>")
  endif()
endforeach()
target_link_libraries(fastsmt_static INTERFACE ${_static_deps})
foreach(_t fastsmt_shared fastsmt_static)
  target_include_directories(${_t} INTERFACE "$<BUILD_INTERFACE:${FASTSMT_BUILD_INCLUDE}>"
    "$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>")
endforeach()

install(TARGETS fastsmt_shared fastsmt_static EXPORT fastsmtTargets
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}")
install(FILES ${FASTSMT_PUBLIC_HEADERS} DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/fastsmt")

# CMake package: lib/cmake/fastsmt/fastsmtConfig.cmake (+ version, targets; relocatable).
set(FASTSMT_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/fastsmt")
install(EXPORT fastsmtTargets NAMESPACE fastsmt:: DESTINATION "${FASTSMT_CMAKE_DIR}")
configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/fastsmtConfig.cmake.in"
  "${CMAKE_BINARY_DIR}/cmake/fastsmtConfig.cmake" INSTALL_DESTINATION "${FASTSMT_CMAKE_DIR}")
write_basic_package_version_file("${CMAKE_BINARY_DIR}/cmake/fastsmtConfigVersion.cmake"
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion) # 0.x: a minor version may break
install(FILES "${CMAKE_BINARY_DIR}/cmake/fastsmtConfig.cmake"
  "${CMAKE_BINARY_DIR}/cmake/fastsmtConfigVersion.cmake" DESTINATION "${FASTSMT_CMAKE_DIR}")

# pkg-config: prefix relative to the .pc file, so the same file serves every --prefix and the .deb.
# The Debian libraries are named in Libs.private, not as Requires: no -dev package's .pc file is
# needed to build against the shared library.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  message(FATAL_ERROR "fastsmt: CMAKE_INSTALL_LIBDIR and CMAKE_INSTALL_INCLUDEDIR must be relative "
                      "to the prefix (fastsmt.pc and the CMake package are relocatable)")
endif()
file(RELATIVE_PATH FASTSMT_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" FASTSMT_PC_TO_PREFIX "${FASTSMT_PC_TO_PREFIX}")
configure_file("${CMAKE_CURRENT_LIST_DIR}/fastsmt.pc.in" "${CMAKE_BINARY_DIR}/cmake/fastsmt.pc" @ONLY)
install(FILES "${CMAKE_BINARY_DIR}/cmake/fastsmt.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")

include(cmake/FastsmtPackage.cmake)

# Tests (label install): the tools' --help and man pages; installing into a scratch prefix and
# building a consumer against it with pkg-config and with find_package (tests/install/).
if(FASTSMT_TESTS)
  set(_man_dir "")
  set(_man 0)
  if(FASTSMT_MAN_PAGES)
    set(_man_dir "${CMAKE_BINARY_DIR}/man")
    set(_man 1)
  endif()
  add_test(NAME tools_help COMMAND sh "${CMAKE_SOURCE_DIR}/tests/install/help_test.sh"
    "${CMAKE_BINARY_DIR}/bin" "${_man_dir}" ${FASTSMT_TOOLS})
  set(_san "")
  if(FASTSMT_SANITIZE)
    set(_san "-fsanitize=${FASTSMT_SANITIZE} -fno-omit-frame-pointer")
  endif()
  string(REPLACE ";" " " _tools "${FASTSMT_TOOLS}")
  add_test(NAME install_consumer COMMAND sh "${CMAKE_SOURCE_DIR}/tests/install/install_test.sh")
  set_tests_properties(install_consumer PROPERTIES
    ENVIRONMENT "BUILD=${CMAKE_BINARY_DIR};SOURCE=${CMAKE_SOURCE_DIR};WORK=${CMAKE_BINARY_DIR}/install-test;CMAKE=${CMAKE_COMMAND};CC=${CMAKE_C_COMPILER};TOOLS=${_tools};MAN=${_man};SAN_FLAGS=${_san}"
    RESOURCE_LOCK fastsmt_build_tree TIMEOUT 600)
  set(_server 0)
  if(TARGET fastsmt_server)
    set(_server 1)
  endif()
  add_test(NAME package_deb COMMAND sh "${CMAKE_SOURCE_DIR}/tests/install/deb_test.sh")
  set_tests_properties(package_deb PROPERTIES
    ENVIRONMENT "BUILD=${CMAKE_BINARY_DIR};SOURCE=${CMAKE_SOURCE_DIR};WORK=${CMAKE_BINARY_DIR}/deb-test;CPACK=${CMAKE_CPACK_COMMAND};VERSION=${PROJECT_VERSION};TOOLS=${_tools};MAN=${_man};SANITIZE=${FASTSMT_SANITIZE};SERVER=${_server}"
    RESOURCE_LOCK fastsmt_build_tree SKIP_RETURN_CODE ${FASTSMT_SKIP_CODE} TIMEOUT 600)
  set_tests_properties(tools_help install_consumer package_deb PROPERTIES LABELS install)
endif()
