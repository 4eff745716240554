# cmake -DSOURCE_DIR=... -DOUTPUT=... -DFALLBACK=... -P write_version.cmake
# A tagged tree gives `git describe` (v1.2.0-3-gabc1234-dirty); an untagged one the project
# version and the commit (0.1.0-gabc1234-dirty); no git at all the project version alone.
set(version "${FALLBACK}")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS "${SOURCE_DIR}/.git")
    execute_process(COMMAND "${GIT_EXECUTABLE}" describe --always --dirty --tags
                    WORKING_DIRECTORY "${SOURCE_DIR}" OUTPUT_VARIABLE describe
                    OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc ERROR_QUIET)
    if(rc EQUAL 0 AND describe MATCHES "^[0-9a-f]+(-dirty)?$")
        set(version "${FALLBACK}-g${describe}")
    elseif(rc EQUAL 0 AND describe)
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
