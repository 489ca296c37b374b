# Sanitizer builds: -DLOCKSIM_TSAN=ON or -DLOCKSIM_ASAN=ON (not both).
if(LOCKSIM_TSAN AND LOCKSIM_ASAN)
  message(FATAL_ERROR "LOCKSIM_TSAN and LOCKSIM_ASAN cannot be combined; use two build trees")
endif()
if(LOCKSIM_TSAN)
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(LOCKSIM_ASAN)
  # -Wno-maybe-uninitialized: GCC 12 reports false positives inside libstdc++'s <regex> when
  # instrumented with -fsanitize=address; the plain build keeps the warning.
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined -Wno-maybe-uninitialized)
  add_link_options(-fsanitize=address,undefined)
endif()
