// The sanitizers' defaults in a sanitizer build (the debug preset), linked into every executable
// built with -fsanitize (CMakeLists.txt). AddressSanitizer reports memory errors and leaves leaks
// alone: Open MPI and the libraries under it keep memory until exit, and LeakSanitizer's tracer
// itself fails now and then at exit. `ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0`
// checks leaks too: each allocation's stack unwound in full reaches those libraries, whose leaks
// the suppressions below leave out, so a leak of gridsim's own is what it reports. Undefined
// behaviour ends the process. ASAN_OPTIONS, LSAN_OPTIONS and UBSAN_OPTIONS still apply.
extern "C" {

const char* __asan_default_options() { return "detect_leaks=0"; }

const char* __lsan_default_suppressions() {
    return "leak:libmpi.so\n"
           "leak:libopen-pal.so\n"
           "leak:libopen-rte.so\n"
           "leak:libpmix.so\n"
           "leak:libhwloc.so\n"
           "leak:libevent\n"
           "leak:mca_\n";
}

const char* __ubsan_default_options() { return "print_stacktrace=1:halt_on_error=1"; }
}
