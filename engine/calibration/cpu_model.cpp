// The CPU model the calibration cache is keyed to, from /proc/cpuinfo.
#include "cairn/kernel_calibration.h"

#include <fstream>
#include <string>

namespace cairn {

namespace {

// The value of the first "key : value" line of /proc/cpuinfo for `key`.
std::string field(const std::string& text, const std::string& key) {
    size_t at = 0;
    while (at < text.size()) {
        size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        const std::string line = text.substr(at, end - at);
        at = end + 1;
        const size_t colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string name = line.substr(0, colon);
        while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.pop_back();
        if (name != key) continue;
        std::string value = line.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') value.erase(value.begin());
        return value;
    }
    return {};
}

}  // namespace

std::string cpuModelName() {
    std::ifstream in("/proc/cpuinfo");
    std::string text;
    // The first processor's block is enough (a few KiB at most).
    for (std::string line; text.size() < 64 * 1024 && std::getline(in, line) && !line.empty();) text += line + "\n";
    // x86: the brand string alone does not tell CPUs apart inside a VM
    // ("AMD EPYC" for Zen 3 and Zen 4), the family and model numbers do.
    if (std::string name = field(text, "model name"); !name.empty()) {
        const std::string family = field(text, "cpu family"), model = field(text, "model"),
                          stepping = field(text, "stepping");
        if (!family.empty()) name += " (family " + family + ", model " + model + ", stepping " + stepping + ")";
        return name;
    }
    // aarch64: no model name; the implementer, part and variant identify the core.
    if (std::string part = field(text, "CPU part"); !part.empty())
        return "Arm implementer " + field(text, "CPU implementer") + " part " + part + " variant " +
            field(text, "CPU variant");
    return "unknown CPU";
}

}  // namespace cairn
