# locksim_warnings(target): the warning set every locksim target is built with.
function(locksim_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wshadow -Wconversion
                                           -Wno-sign-conversion)
  if(LOCKSIM_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
