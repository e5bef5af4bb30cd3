// An error answered in OpenAI's JSON shape: {"error": {"message", "type", "param", "code"}}
// with the HTTP status that goes with it.
#pragma once

#include <stdexcept>
#include <string>

namespace cairn::server {

struct ApiError : std::runtime_error {
    ApiError(int status, std::string type, const std::string& message, std::string param = {}, std::string code = {})
        : std::runtime_error(message), status(status), type(std::move(type)), param(std::move(param)),
          code(std::move(code)) {}
    int status;
    std::string type;  // "invalid_request_error", "authentication_error", "server_error", ...
    std::string param;  // the request field at fault, if any
    std::string code;  // e.g. "model_not_found", "context_length_exceeded"
};

// The body of an error response.
std::string errorBody(const ApiError& error);

inline ApiError badRequest(const std::string& message, std::string param = {}) {
    return ApiError(400, "invalid_request_error", message, std::move(param));
}

}  // namespace cairn::server
