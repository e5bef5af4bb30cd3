// Python and Jinja semantics shared by the evaluator: operators, attribute and
// item access, iteration, filters, tests, str/dict/list methods and globals.
#pragma once

#include "value.h"

#include <ctime>
#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

namespace cairn::chat {

// Throws cairn::TemplateError("chat template", message).
[[noreturn]] void raiseError(const std::string& message);
// The error an operation on an Undefined raises ("'name' is undefined").
[[noreturn]] void raiseUndefined(const Value& undefined);

// Binds call arguments to parameter names like a Python signature (positional, then keywords).
class Params {
public:
    Params(const std::string& function, const CallArgs& args, std::initializer_list<const char*> names);
    bool has(size_t i) const { return !values_[i].isUndefined() || given_[i]; }
    const Value& operator[](size_t i) const { return values_[i]; }
    Value get(size_t i, Value fallback) const { return has(i) ? values_[i] : fallback; }
    const std::string& function() const { return function_; }

private:
    std::string function_;
    std::vector<Value> values_;
    std::vector<bool> given_;
};

// Filters, `is` tests and methods are found the same way: a table from name to
// function (filters.cpp, jinja_is_tests.cpp, methods.cpp), jinja2's other names
// for some of them (`d` for `default`, `==` for `eq`, ...) resolved first.
template <class Fn>
struct BuiltinTable {
    std::map<std::string, Fn> functions;
    std::map<std::string, std::string> aliases;

    const Fn* find(const std::string& name) const {
        auto alias = aliases.find(name);
        auto it = functions.find(alias != aliases.end() ? alias->second : name);
        return it != functions.end() ? &it->second : nullptr;
    }
    // The function, or jinja2's error naming what is missing ("No filter named 'x'.").
    const Fn& get(const std::string& name, const char* kind) const {
        if (const Fn* fn = find(name)) return *fn;
        raiseError(std::string("No ") + kind + " named '" + name + "'.");
    }
};

// Operators
Value binaryOp(const std::string& op, const Value& a, const Value& b);
Value negate(const Value& v);
bool contains(const Value& container, const Value& item);  // Python `item in container`
std::vector<Value> iterate(const Value& v);  // Python iter(): str by code point, dict keys
size_t length(const Value& v);  // Python len()

// Jinja's getattr (attribute first, then item) and getitem (item first, then attribute).
Value getAttribute(const Value& obj, const std::string& name);
Value getItem(const Value& obj, const Value& key);
Value getSlice(const Value& obj, const Value& start, const Value& stop, const Value& step);
// Calls a function value; raises for anything else.
Value callValue(const Value& callee, CallArgs& args);

// Methods of str, dict and list (the sandbox refuses the mutating ones).
bool isMethod(const Value& obj, const std::string& name);
Value callMethod(const Value& obj, const std::string& name, CallArgs& args);

// Python str methods that filters reuse.
std::string pyStrip(const std::string& s, const Value& chars, bool left, bool right);
std::vector<std::string> pySplit(const std::string& s, const Value& sep, int64_t maxSplit);
std::string pyReplace(const std::string& s, const std::string& from, const std::string& to, int64_t count);

Value applyFilter(const std::string& name, const Value& input, CallArgs& args);
bool hasFilter(const std::string& name);
bool applyTest(const std::string& name, const Value& input, CallArgs& args);
bool hasTest(const std::string& name);

// C-locale strftime with Python's directives (and glibc's %-d style flags).
std::string formatTime(const std::string& format, const std::tm& time);

}  // namespace cairn::chat
