# The sanitizer build, GG_SANITIZE=address,undefined (or ON): every target is compiled and linked
# with the sanitizers, and a UBSan finding ends the process instead of printing and going on, so a
# test that meets one fails. With clang and its libFuzzer, GG_LIBFUZZER is set and tests/fuzz is
# built (docs/testing.md, "Sanitizers").
if(GG_SANITIZE_ADDRESS AND NOT GG_SANITIZE)
  set(GG_SANITIZE address,undefined)
elseif(GG_SANITIZE MATCHES "^(ON|On|on|YES|Yes|yes|TRUE|True|true|1)$")
  set(GG_SANITIZE address,undefined)
endif()
set(GG_LIBFUZZER OFF)
if(GG_SANITIZE)
  add_compile_options(-fsanitize=${GG_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${GG_SANITIZE})
  # Debian: clang and libclang-rt-14-dev. The libraries the harnesses reach are compiled with
  # coverage callbacks, which the sanitizer runtime provides to every other program.
  if(CMAKE_C_COMPILER_ID MATCHES "Clang")
    include(CheckCSourceCompiles)
    set(CMAKE_REQUIRED_FLAGS -fsanitize=fuzzer)
    check_c_source_compiles("#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return (int)(d[0] & n & 0); }"
      GG_HAVE_LIBFUZZER)
    unset(CMAKE_REQUIRED_FLAGS)
  endif()
  if(GG_HAVE_LIBFUZZER)
    set(GG_LIBFUZZER ON)
  else()
    message(STATUS "tests/fuzz is not built: it needs clang with libFuzzer "
                   "(-DCMAKE_C_COMPILER=clang)")
  endif()
endif()
