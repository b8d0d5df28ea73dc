# Writes DST (harness/build_info.hpp) from SRC with the source tree's current git commit
# and dirty flag. Runs at configure time and again at every build (target
# hk_build_info_gen), so a build made after a commit never carries the previous commit
# (qualification compares it with the campaign's pinned commit). configure_file leaves DST
# untouched when nothing changed, so an unchanged commit recompiles nothing.
# Inputs: -DSOURCE_DIR -DSRC -DDST -DPROJECT_VERSION
execute_process(COMMAND git rev-parse HEAD WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE HARNESS_SOURCE_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE
                ERROR_QUIET RESULT_VARIABLE _git_rc)
if(NOT _git_rc EQUAL 0 OR HARNESS_SOURCE_COMMIT STREQUAL "")
  set(HARNESS_SOURCE_COMMIT "unknown")
endif()
execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE _git_dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(_git_dirty STREQUAL "")
  set(HARNESS_SOURCE_DIRTY 0)
else()
  set(HARNESS_SOURCE_DIRTY 1)
endif()
configure_file(${SRC} ${DST} @ONLY)
