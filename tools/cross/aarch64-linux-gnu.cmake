# Cross build for 64-bit Arm (Debian's g++-aarch64-linux-gnu and arm64
# multiarch libraries), run under qemu-user: how CI tests the NEON kernels on
# an x86-64 machine. See tools/cross/README.md.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# sentencepiece from tools/cross/install.sh's prefix, the rest from Debian's arm64 packages.
set(ENV{PKG_CONFIG_LIBDIR} "/opt/cairn-cross/aarch64/pkgconfig:/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
# Tests run through qemu-user; -L finds the arm64 loader and libraries.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu)
