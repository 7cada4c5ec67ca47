# The sanitizer build, GG_SANITIZE=address,undefined (or ON): every target is compiled and linked
# with the sanitizers, and a UBSan finding ends the process instead of printing and going on, so a
# test that meets one fails (README, "Sanitizers and the parser fuzzer").
if(GG_SANITIZE_ADDRESS AND NOT GG_SANITIZE)
  set(GG_SANITIZE address,undefined)
elseif(GG_SANITIZE MATCHES "^(ON|On|on|YES|Yes|yes|TRUE|True|true|1)$")
  set(GG_SANITIZE address,undefined)
endif()
if(GG_SANITIZE)
  add_compile_options(-fsanitize=${GG_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${GG_SANITIZE})
endif()
