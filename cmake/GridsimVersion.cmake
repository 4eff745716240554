# The version printed by the program and stored in run reports: `git describe` of the source at
# build time (so a report never names a stale commit), else the project version. A custom
# target rewrites generated/gridsim_version.hpp on every build, but only when the text changes.
set(GRIDSIM_VERSION_HEADER "${PROJECT_BINARY_DIR}/generated/gridsim_version.hpp")
add_custom_target(gridsim_version
    COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DOUTPUT=${GRIDSIM_VERSION_HEADER}
            -DFALLBACK=${PROJECT_VERSION} -P ${PROJECT_SOURCE_DIR}/cmake/write_version.cmake
    BYPRODUCTS ${GRIDSIM_VERSION_HEADER}
    COMMENT "gridsim version header")
