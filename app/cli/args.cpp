#include "command.h"

#include "cairn/error.h"

#include <cstdlib>

namespace cairn::cli {

bool Args::flag(const std::string& name) {
    for (auto it = args_.begin(); it != args_.end(); ++it)
        if (*it == name) {
            args_.erase(it);
            return true;
        }
    return false;
}

std::optional<std::string> Args::option(const std::string& shortName, const std::string& longName) {
    for (auto it = args_.begin(); it != args_.end(); ++it) {
        if (*it == shortName || (!longName.empty() && *it == longName)) {
            if (it + 1 == args_.end()) throw Error("cairn-cli", "option " + *it + " needs a value");
            std::string v = *(it + 1);
            args_.erase(it, it + 2);
            return v;
        }
    }
    return std::nullopt;
}

std::string Args::require(const std::string& shortName, const std::string& longName) {
    auto v = option(shortName, longName);
    if (!v) throw Error("cairn-cli", "missing required option " + (longName.empty() ? shortName : longName));
    return *v;
}

double Args::number(const std::string& shortName, const std::string& longName, double fallback) {
    auto v = option(shortName, longName);
    if (!v) return fallback;
    char* end = nullptr;
    double d = std::strtod(v->c_str(), &end);
    if (end == v->c_str() || *end != '\0')
        throw Error("cairn-cli",
                    "option " + (longName.empty() ? shortName : longName) + ": '" + *v + "' is not a number");
    return d;
}

std::vector<std::string> Args::positionals() {
    for (const auto& a : args_)
        if (a.size() > 1 && a[0] == '-' &&
            !(a.size() > 1 && (std::isdigit(static_cast<unsigned char>(a[1])) || a[1] == '.')))
            throw Error("cairn-cli", "unknown option " + a);
    return args_;
}

}  // namespace cairn::cli
