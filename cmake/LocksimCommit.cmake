# LocksimCommit.cmake: run with `cmake -DSOURCE_DIR=... -DOUTPUT=... -P`, at every build. Writes
# OUTPUT, a header defining LOCKSIM_COMMIT (git describe --always --dirty of SOURCE_DIR, or
# "unknown"), and rewrites it only when the text changes, so a build recompiles the one file that
# includes it only when the commit (or the tree's dirtiness) changed since the last build.
execute_process(COMMAND git -C ${SOURCE_DIR} describe --always --dirty --abbrev=12
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
                ERROR_QUIET RESULT_VARIABLE result)
if(NOT result EQUAL 0 OR commit STREQUAL "")
  set(commit "unknown")
endif()
set(text "// Generated at build time by cmake/LocksimCommit.cmake.\n#define LOCKSIM_COMMIT \"${commit}\"\n")
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE ${OUTPUT} "${text}")
endif()
