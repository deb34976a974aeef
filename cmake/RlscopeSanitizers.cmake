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
  # Line tables keep file:line in reports. AddressSanitizer+UBSan at -O0: a third of the -O1
  # build time (kineto_importer.cpp: 16 s against 51 s), which is most of CI's time on two cores,
  # for tests that run about twice as long; nothing is optimised away before it is checked.
  # ThreadSanitizer at -O1, as its documentation advises: its tests are the slow part there.
  if(RLSCOPE_SANITIZE MATCHES "address")
    add_compile_options(${_rlscope_san_flags} -O0 -g1)
  else()
    add_compile_options(${_rlscope_san_flags} -O1 -g1)
  endif()
  add_link_options(${_rlscope_san_flags})
endif()
