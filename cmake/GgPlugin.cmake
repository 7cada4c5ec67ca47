# ggfuzz_add_plugin(NAME [ALLOW_UNDEFINED] SOURCE...): a ggfuzz kernel plugin, the module NAME.so
# (no "lib" prefix: `ggfuzz --plugin path/NAME.so` loads it), built against the kernel ABI alone
# (ggfuzz::kernel_abi, the directory of gg_kernel.h) and linking nothing of ggfuzz, so that an
# undefined symbol is a link error; ALLOW_UNDEFINED leaves symbols to be resolved at load time
# (sanitizer runtimes). Used by ggfuzz's own build and installed with its CMake package, where
# find_package(ggfuzz) includes it.
function(ggfuzz_add_plugin name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "ALLOW_UNDEFINED" "" "")
  if(NOT arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "ggfuzz_add_plugin(${name}): no source files")
  endif()
  add_library(${name} MODULE ${arg_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PRIVATE ggfuzz::kernel_abi)
  set_target_properties(${name} PROPERTIES PREFIX "")
  if(NOT arg_ALLOW_UNDEFINED)
    target_link_options(${name} PRIVATE LINKER:--no-undefined)
  endif()
endfunction()
