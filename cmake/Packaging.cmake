# Installation layout and the Debian package (included once by the top-level CMakeLists).
#
# `cmake --install <build> [--prefix P]` lays out:
#   P/bin/wheelfix
#   P/share/man/man1/wheelfix.1
#   P/share/bash-completion/completions/wheelfix
#   P/share/zsh/site-functions/_wheelfix
#   P/share/doc/wheelfix/schema/wheelfix.<command>-1.schema.json   (the --json formats)
#   P/libexec/wheelfix/patchelf -> ../../bin/wheelfix   (the patchelf front end: put
#     P/libexec/wheelfix first on PATH and auditwheel's `patchelf` calls are wheelfix's;
#     not in P/bin, where it would clash with Debian's patchelf package)
# The completion scripts are generated at build time by the binary just built
# (`wheelfix completion bash|zsh`, src/cli/completion.cpp), so they list exactly the
# commands and options it has.
#
# `cpack -G DEB` in the build directory writes wheelfix_<version>_<arch>.deb (prefix
# /usr). Its Depends come from dpkg-shlibdeps on the stripped binary: the Debian
# runtime packages of what it links (libc6, libfmt9, libgcc-s1, libssl3, libstdc++6,
# libzip4, zlib1g) with the versions the binary needs; a fixed list is used on a
# machine without dpkg-shlibdeps (package dpkg-dev).

# Installing (and cpack) takes what the build made; it does not build the tests first.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY TRUE)

set(WHEELFIX_COMPLETION_DIR ${PROJECT_BINARY_DIR}/completions)
add_custom_command(
  OUTPUT ${WHEELFIX_COMPLETION_DIR}/wheelfix.bash ${WHEELFIX_COMPLETION_DIR}/_wheelfix
  COMMAND ${CMAKE_COMMAND} -DWHEELFIX=$<TARGET_FILE:wheelfix> -DOUTPUT_DIR=${WHEELFIX_COMPLETION_DIR}
          -P ${PROJECT_SOURCE_DIR}/cmake/Completions.cmake
  DEPENDS wheelfix ${PROJECT_SOURCE_DIR}/cmake/Completions.cmake
  COMMENT "Generating the bash and zsh completions")
add_custom_target(wheelfix_completions ALL
  DEPENDS ${WHEELFIX_COMPLETION_DIR}/wheelfix.bash ${WHEELFIX_COMPLETION_DIR}/_wheelfix)

install(TARGETS wheelfix RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/man/wheelfix.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${WHEELFIX_COMPLETION_DIR}/wheelfix.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME wheelfix)
install(FILES ${WHEELFIX_COMPLETION_DIR}/_wheelfix DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/site-functions)
install(CODE "
  set(link \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBEXECDIR}/wheelfix/patchelf\")
  get_filename_component(dir \"\${link}\" DIRECTORY)
  file(MAKE_DIRECTORY \"\${dir}\")
  file(REMOVE \"\${link}\")
  file(CREATE_LINK ../../${CMAKE_INSTALL_BINDIR}/wheelfix \"\${link}\" SYMBOLIC)
  message(STATUS \"Installing: \${link} -> ../../${CMAKE_INSTALL_BINDIR}/wheelfix\")")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/schema/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/schema
        FILES_MATCHING PATTERN "*.schema.json")

set(WHEELFIX_PACKAGE_MAINTAINER "wheelfix maintainers" CACHE STRING "Maintainer field of the .deb")
set(CPACK_PACKAGE_NAME wheelfix)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT ${WHEELFIX_PACKAGE_MAINTAINER})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "inspect, check and repair Python wheels with native C++/CUDA extensions")
string(CONCAT CPACK_PACKAGE_DESCRIPTION
    "wheelfix reads and repairs Python wheels that hold native C++/CUDA extensions (PyTorch extension wheels): "
    "linkage, RPATH/RUNPATH, glibc floors and honest manylinux tags, CUDA fatbin architectures, torch ABI checks, "
    "shims for drifted torch symbols, retagging. It works offline, without a GPU.")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
find_program(WHEELFIX_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(WHEELFIX_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
      "libc6 (>= 2.34), libfmt9 (>= 9.1.0), libgcc-s1 (>= 3.0), libssl3 (>= 3.0.0), libstdc++6 (>= 12), libzip4 (>= 1.7.0), zlib1g (>= 1:1.2.0)")
  if(TARGET wheelfix::isal)
    string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", libisal2 (>= 2.30.0)")
  endif()
endif()
include(CPack)
