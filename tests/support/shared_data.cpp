#include "shared_data.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace cairn::test {

std::string sharedDir() {
    std::string dir = CAIRN_SHARED_DIR;
    if (const char* env = std::getenv("CAIRN_SHARED_DIR"); env && *env) dir = env;
    std::error_code ec;
    if (!std::filesystem::is_directory(std::filesystem::path(dir) / "fixtures", ec)) return {};
    return std::filesystem::canonical(dir, ec).string();
}

std::string sharedPath(const std::string& relative) { return sharedDir() + "/" + relative; }

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace cairn::test
