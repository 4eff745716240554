# cmake -DSOURCE_DIR=... -DOUTPUT=... -DFALLBACK=... -P write_version.cmake
set(version "${FALLBACK}")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS "${SOURCE_DIR}/.git")
    execute_process(COMMAND "${GIT_EXECUTABLE}" describe --always --dirty --tags
                    WORKING_DIRECTORY "${SOURCE_DIR}" OUTPUT_VARIABLE describe
                    OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc ERROR_QUIET)
    if(rc EQUAL 0 AND describe)
        set(version "${describe}")
    endif()
endif()
set(text "#pragma once\n#define GRIDSIM_VERSION \"${version}\"\n")
if(EXISTS "${OUTPUT}")
    file(READ "${OUTPUT}" old)
endif()
if(NOT "${old}" STREQUAL "${text}")
    file(WRITE "${OUTPUT}" "${text}")
endif()
