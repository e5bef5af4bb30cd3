// Errors at the engine's API boundary: a value with what went wrong and where.
#pragma once

#include <stdexcept>
#include <string>

namespace cairn {

// Thrown for bad input (files, tokens, settings) and refused operations.
// `what()` is a single line "where: what" suitable for showing to a user.
class Error : public std::runtime_error {
public:
    Error(std::string where, std::string what)
        : std::runtime_error(where.empty() ? what : where + ": " + what), where_(std::move(where)),
          what_(std::move(what)) {}

    const std::string& where() const noexcept { return where_; }
    const std::string& reason() const noexcept { return what_; }

private:
    std::string where_;
    std::string what_;
};

}  // namespace cairn
