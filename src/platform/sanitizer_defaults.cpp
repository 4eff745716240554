// The sanitizers' defaults in a sanitizer build (the debug preset), linked into every executable
// built with -fsanitize (CMakeLists.txt): LeakSanitizer leaves out what Open MPI and the
// libraries under it allocate and keep until exit (each allocation's stack unwound in full, so
// that it reaches them), so a leak of gridsim's own is what it reports; undefined behaviour ends
// the process. ASAN_OPTIONS, LSAN_OPTIONS and UBSAN_OPTIONS in the environment still apply.
extern "C" {

const char* __asan_default_options() { return "fast_unwind_on_malloc=0"; }

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
