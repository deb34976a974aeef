# Warning flags for the project's own targets (not for third-party code).
add_library(rlscope_warnings INTERFACE)
target_compile_options(rlscope_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX,C>:-Wall -Wextra -Wshadow -Wnon-virtual-dtor -Wpedantic
  -Wno-missing-field-initializers>)
option(RLSCOPE_WERROR "Treat warnings as errors" OFF)
if(RLSCOPE_WERROR)
  target_compile_options(rlscope_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX,C>:-Werror>)
endif()
