#include "kernels/device_code.hpp"

#include <cctype>
#include <sstream>

namespace gridsim {

namespace {

// One entry of the list: its number (80 for "80-real"), whether it ends in "a" (architecture-
// specific code), and which kinds of code it asks for.
struct ArchEntry {
    int number = 0;
    bool specific = false;
    bool real = true;
    bool virt = true;
};

bool parse_entry(std::string text, ArchEntry& e) {
    const auto dash = text.find('-');
    if (dash != std::string::npos) {
        const std::string kind = text.substr(dash + 1);
        text.resize(dash);
        e.real = kind == "real";
        e.virt = kind == "virtual";
        if (!e.real && !e.virt) return false;
    }
    if (!text.empty() && (text.back() == 'a' || text.back() == 'f')) {
        e.specific = text.back() == 'a';
        text.pop_back();
    }
    if (text.empty()) return false;
    for (char c : text)
        if (std::isdigit(static_cast<unsigned char>(c)) == 0) return false;
    e.number = std::stoi(text);
    return true;
}

bool runs_on(const ArchEntry& e, int major, int minor) {
    const int device = 10 * major + minor;
    if (e.specific) return e.number == device;
    if (e.real && e.number / 10 == major && e.number % 10 <= minor) return true;
    return e.virt && e.number <= device;
}

std::string cleaned(const std::string& archs) {
    std::string out;
    for (char c : archs) out += c == ';' ? ',' : c;
    return out;
}

}  // namespace

bool has_device_code(const std::string& archs, int major, int minor) {
    std::istringstream in(cleaned(archs));
    std::string item;
    while (std::getline(in, item, ',')) {
        ArchEntry e;
        if (parse_entry(item, e) && runs_on(e, major, minor)) return true;
    }
    return false;
}

std::string missing_device_code(const std::string& archs, int device, const std::string& name,
                                int major, int minor) {
    if (has_device_code(archs, major, minor)) return {};
    std::ostringstream out;
    out << "GPU " << device << " (" << name << ", compute capability " << major << "." << minor
        << ") has no code in this build of gridsim, which has code for CUDA architectures "
        << (archs.empty() ? std::string("none") : cleaned(archs))
        << "; rebuild with -DCMAKE_CUDA_ARCHITECTURES=" << major << minor
        << " (or native, on a node with this GPU)";
    return out.str();
}

}  // namespace gridsim
