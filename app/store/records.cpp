#include "cairn/store/records.h"

#include "cairn/error.h"

namespace cairn::store {

std::string_view roleName(Role role) {
    switch (role) {
    case Role::System: return "system";
    case Role::User: return "user";
    case Role::Assistant: return "assistant";
    case Role::Tool: return "tool";
    }
    return "user";
}

Role roleFromName(std::string_view name) {
    if (name == "system") return Role::System;
    if (name == "user") return Role::User;
    if (name == "assistant") return Role::Assistant;
    if (name == "tool") return Role::Tool;
    throw Error("store", "unknown message role '" + std::string(name) + "'");
}

}  // namespace cairn::store
