# The version string printed by the program and stored in run reports: `git describe` when the
# source is a git checkout, else the project version.
find_package(Git QUIET)
set(GRIDSIM_GIT_DESCRIBE "${PROJECT_VERSION}")
if(GIT_FOUND AND EXISTS "${PROJECT_SOURCE_DIR}/.git")
    execute_process(COMMAND "${GIT_EXECUTABLE}" describe --always --dirty --tags
                    WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
                    OUTPUT_VARIABLE _describe OUTPUT_STRIP_TRAILING_WHITESPACE
                    RESULT_VARIABLE _rc ERROR_QUIET)
    if(_rc EQUAL 0 AND _describe)
        set(GRIDSIM_GIT_DESCRIBE "${_describe}")
    endif()
endif()
