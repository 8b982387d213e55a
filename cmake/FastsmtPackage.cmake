# `cpack -G DEB` in the build folder: fastsmt_<version>_<arch>.deb holding what `cmake --install`
# installs, under /usr. Its dependencies are computed by dpkg-shlibdeps from the libraries the
# tools and libfastsmt.so link (libc6, zlib1g, liblzma5, libbz2-1.0, libzstd1; offline: it reads the
# local dpkg database; xxhash is compiled in, so no libxxhash0). Without dpkg-shlibdeps (dpkg-dev)
# or `file` (which CPack needs for it), or with FASTSMT_DEB_SHLIBDEPS=OFF, that list is declared
# instead. dpkg-shlibdeps passes over libraries no package owns (--ignore-missing-info): a CUDA
# build's package does not declare NVIDIA's CUDA runtime.
option(FASTSMT_DEB_SHLIBDEPS "cpack -G DEB: compute the .deb's dependencies with dpkg-shlibdeps" ON)
find_program(FASTSMT_DPKG_SHLIBDEPS dpkg-shlibdeps)
find_program(FASTSMT_FILE file)
set(CPACK_PACKAGE_NAME fastsmt)
set(CPACK_PACKAGE_VENDOR "fastsmt")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "statistical machine translation runtime: phrase table, KenLM-identical LM, decoder, NMT")
set(CPACK_PACKAGE_DESCRIPTION
  "fastsmt reads Moses and KenLM models and gives their results, faster: probingpt (binarized phrase
table), glm (n-gram LM with KenLM's scores and query output), fastsmt (phrase-based decoder reading
moses.ini), fastsmt-binarize, nmt (transformer scoring and n-best rescoring). With the C library
(libfastsmt.so, libfastsmt.a), its headers, pkg-config file and CMake package.")
set(CPACK_PACKAGE_CONTACT "fastsmt developers <fastsmt@localhost>")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_STRIP_FILES ON) # a RelWithDebInfo build's debug information stays out of the package
if(FASTSMT_DEB_SHLIBDEPS AND FASTSMT_DPKG_SHLIBDEPS AND FASTSMT_FILE)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  # dpkg-shlibdeps must find libfastsmt.so.0 inside the package, not on the system
  set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
else()
  if(FASTSMT_DEB_SHLIBDEPS)
    message(STATUS "fastsmt: the .deb's dependencies declared, not computed (no dpkg-shlibdeps "
                   "or file: apt-get install dpkg-dev file)")
  endif()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6, zlib1g, liblzma5, libbz2-1.0, libzstd1")
  if(FASTSMT_HAVE_MPI) # the tools fastsmt and glm link Open MPI (dist/dist_mpi.c)
    string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", libopenmpi3")
  endif()
  if(TARGET fastsmt_server) # fastsmt --server (server/CMakeLists.txt)
    string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", libmicrohttpd12, libxmlrpc-core-c3, libjansson4")
  endif()
endif()
include(CPack)
