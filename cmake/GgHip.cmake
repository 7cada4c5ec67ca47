# gg_hip_library(NAME SOURCES file.cu... [FLAGS flag...]): a static library of objects compiled
# by Debian's hipcc for gfx90a and gfx940 (the HIP build, -DGG_HIP=ON), with the project's
# include root, warnings as errors under GG_FATAL_WARNINGS, and hipcc's dependency files so that
# editing a header the sources read rebuilds them. SOURCES are absolute paths.
function(gg_hip_library name)
  cmake_parse_arguments(H "" "" "SOURCES;FLAGS" ${ARGN})
  find_program(GG_HIPCC hipcc REQUIRED)
  find_library(GG_AMDHIP64 amdhip64 REQUIRED)
  set(flags -x hip --offload-arch=gfx90a --offload-arch=gfx940 -O2 -fPIC -DGG_GPU_HIP
            -D__HIP_PLATFORM_AMD__ -I${PROJECT_SOURCE_DIR} -Wall -Wextra ${H_FLAGS})
  if(GG_FATAL_WARNINGS)
    list(APPEND flags -Werror)
  endif()
  set(objs)
  foreach(src ${H_SOURCES})
    get_filename_component(base ${src} NAME_WE)
    set(obj ${CMAKE_CURRENT_BINARY_DIR}/${base}.o)
    add_custom_command(OUTPUT ${obj}
      COMMAND ${GG_HIPCC} ${flags} -MD -MF ${obj}.d -c ${src} -o ${obj}
      DEPENDS ${src}
      DEPFILE ${obj}.d
      COMMENT "hipcc ${base}.cu" VERBATIM)
    list(APPEND objs ${obj})
  endforeach()
  set_source_files_properties(${objs} PROPERTIES EXTERNAL_OBJECT ON GENERATED ON)
  add_library(${name} STATIC ${objs})
  set_target_properties(${name} PROPERTIES LINKER_LANGUAGE C)
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${GG_AMDHIP64} stdc++)
endfunction()
