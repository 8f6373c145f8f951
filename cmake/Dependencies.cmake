# Finds wheelfix's dependencies, all from Debian packages. A missing one stops the
# configure step with the name of the package that provides it.

function(wheelfix_missing what package)
  message(FATAL_ERROR "wheelfix: ${what} not found. Install it with: apt-get install ${package}")
endfunction()

# WHEELFIX_STATIC (scripts/build-wheels): every library as its static archive, for the
# target architecture. Debian ships libz.a and libcrypto.a (zlib1g-dev, libssl-dev, also
# as :arm64); libzip.a it does not, so scripts/build-wheels builds it from Debian's source
# package into a prefix named by CMAKE_PREFIX_PATH; fmt is used header-only (no libfmt.a).
if(WHEELFIX_STATIC)
  set(CMAKE_FIND_LIBRARY_SUFFIXES .a)
  set(ZLIB_USE_STATIC_LIBS ON)
  set(OPENSSL_USE_STATIC_LIBS TRUE)
endif()

find_package(ZLIB QUIET)
if(NOT ZLIB_FOUND)
  wheelfix_missing("zlib" zlib1g-dev)
endif()

# ISA-L (igzip): the fast inflate, deflate and CRC-32 behind zip/codec.hpp. With
# WHEELFIX_ISAL=OFF (or without libisal-dev) zlib does all of it, as it always did.
if(WHEELFIX_ISAL)
  find_path(ISAL_INCLUDE_DIR isa-l/igzip_lib.h)
  find_library(ISAL_LIBRARY isal)
  if(ISAL_INCLUDE_DIR AND ISAL_LIBRARY)
    add_library(wheelfix::isal INTERFACE IMPORTED)
    target_include_directories(wheelfix::isal INTERFACE ${ISAL_INCLUDE_DIR})
    target_link_libraries(wheelfix::isal INTERFACE ${ISAL_LIBRARY})
  elseif(WHEELFIX_ISAL STREQUAL "ON")
    wheelfix_missing("ISA-L (igzip; or configure with -DWHEELFIX_ISAL=OFF for zlib only)" libisal-dev)
  endif()
endif()

find_package(OpenSSL QUIET COMPONENTS Crypto)
if(NOT OpenSSL_FOUND)
  wheelfix_missing("OpenSSL libcrypto (SHA-256)" libssl-dev)
endif()

if(WHEELFIX_STATIC)
  find_path(FMT_INCLUDE_DIR fmt/format.h)
  if(NOT FMT_INCLUDE_DIR)
    wheelfix_missing("fmt" libfmt-dev)
  endif()
  add_library(fmt::fmt INTERFACE IMPORTED)  # the name fmt's own CMake config gives
  target_include_directories(fmt::fmt INTERFACE ${FMT_INCLUDE_DIR})
  target_compile_definitions(fmt::fmt INTERFACE FMT_HEADER_ONLY=1)
else()
  find_package(fmt QUIET)
  if(NOT fmt_FOUND)
    wheelfix_missing("fmt" libfmt-dev)
  endif()
endif()

find_path(LIBZIP_INCLUDE_DIR zip.h)
find_library(LIBZIP_LIBRARY zip)
if(NOT LIBZIP_INCLUDE_DIR OR NOT LIBZIP_LIBRARY)
  wheelfix_missing("libzip" libzip-dev)
endif()
add_library(wheelfix::libzip INTERFACE IMPORTED)
target_include_directories(wheelfix::libzip INTERFACE ${LIBZIP_INCLUDE_DIR})
target_link_libraries(wheelfix::libzip INTERFACE ${LIBZIP_LIBRARY})
if(WHEELFIX_STATIC)
  target_link_libraries(wheelfix::libzip INTERFACE ZLIB::ZLIB)  # libzip.a needs inflate/deflate after it
endif()

find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp)
if(NOT CLI11_INCLUDE_DIR)
  wheelfix_missing("CLI11" libcli11-dev)
endif()
add_library(wheelfix::cli11 INTERFACE IMPORTED)
target_include_directories(wheelfix::cli11 INTERFACE ${CLI11_INCLUDE_DIR})

if(WHEELFIX_BUILD_TESTS)
  find_path(DOCTEST_INCLUDE_DIR doctest/doctest.h)
  if(NOT DOCTEST_INCLUDE_DIR)
    wheelfix_missing("doctest" doctest-dev)
  endif()
  add_library(wheelfix::doctest INTERFACE IMPORTED)
  target_include_directories(wheelfix::doctest INTERFACE ${DOCTEST_INCLUDE_DIR})

  # LIEF 0.9.0 as Debian ships it has no CMake config: find header and library.
  # Tests only: LIEF is the independent reader ours must agree with.
  find_path(LIEF_INCLUDE_DIR LIEF/ELF.hpp)
  find_library(LIEF_LIBRARY LIEF)
  if(NOT LIEF_INCLUDE_DIR OR NOT LIEF_LIBRARY)
    wheelfix_missing("LIEF" liblief-dev)
  endif()
  add_library(wheelfix::lief INTERFACE IMPORTED)
  target_include_directories(wheelfix::lief SYSTEM INTERFACE ${LIEF_INCLUDE_DIR})
  target_link_libraries(wheelfix::lief INTERFACE ${LIEF_LIBRARY})

  find_package(Python3 QUIET COMPONENTS Interpreter)
  if(NOT Python3_FOUND)
    wheelfix_missing("python3" python3)
  endif()
  foreach(tool readelf patchelf eu-readelf)
    string(MAKE_C_IDENTIFIER ${tool} var)
    find_program(TOOL_${var} ${tool})
  endforeach()
  if(NOT TOOL_readelf)
    wheelfix_missing("readelf" binutils)
  endif()
  if(NOT TOOL_patchelf)
    wheelfix_missing("patchelf" patchelf)
  endif()
  if(NOT TOOL_eu_readelf)
    wheelfix_missing("eu-readelf" elfutils)
  endif()
endif()
