#include <cstdio>
#include <cstdlib>

#include "kernels/device_runtime.hpp"

namespace gridsim {

namespace {

[[noreturn]] void print_and_abort(const char* message) {
    std::fprintf(stderr, "gridsim: %s\n", message);
    std::fflush(stderr);
    std::abort();
}

FatalErrorHandler g_handler = &print_and_abort;

}  // namespace

void set_fatal_error_handler(FatalErrorHandler handler) {
    g_handler = handler != nullptr ? handler : &print_and_abort;
}

void fatal_error(const char* message) {
    g_handler(message);
    std::abort();  // a handler that returned
}

}  // namespace gridsim
