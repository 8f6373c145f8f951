# Cross-compiling for aarch64 with Debian's cross toolchain (g++-aarch64-linux-gnu,
# libc6-dev-arm64-cross) and multiarch :arm64 -dev packages (the static-aarch64 preset,
# scripts/build-wheels). Headers come from /usr/include/aarch64-linux-gnu and /usr/include,
# libraries from /usr/lib/aarch64-linux-gnu: never the build machine's x86_64 ones.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
