# Run at every build (trainer/process's ddpscale_git_commit target), not at configure time: a
# build dir configured once and rebuilt after new commits must record the commit it built.
# Writes OUT only when the commit changed, so an unchanged tree recompiles nothing.
# A source copy without a usable .git may name its commit in a GIT_COMMIT file.
execute_process(COMMAND git rev-parse --short=12 HEAD
  WORKING_DIRECTORY ${SOURCE_DIR}
  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
# Sources that differ from that commit are named so: a copy of a newer tree beside an older
# .git would otherwise record the older commit for the newer code.
if(commit)
  execute_process(COMMAND git diff --quiet HEAD --
    WORKING_DIRECTORY ${SOURCE_DIR} RESULT_VARIABLE differs OUTPUT_QUIET ERROR_QUIET)
  if(differs EQUAL 1)
    set(commit "${commit}-modified")
  endif()
endif()
if(NOT commit AND EXISTS ${SOURCE_DIR}/GIT_COMMIT)
  file(STRINGS ${SOURCE_DIR}/GIT_COMMIT commit LIMIT_COUNT 1)
endif()
if(NOT commit)
  set(commit "unknown")
endif()
set(text "// Written at build time by cmake/write_git_commit.cmake.\n#pragma once\n#define DDPSCALE_GIT_COMMIT \"${commit}\"\n")
set(old "")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUT} "${text}")
endif()
