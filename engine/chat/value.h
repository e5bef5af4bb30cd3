// The interpreter's values: Python-like none, bool, int, float, str, list/tuple,
// dict (insertion order), callables, namespace() objects and jinja2's lenient Undefined.
#pragma once

#include "budget.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace cairn::chat {

class Value;

// The heap parts of values charge their bytes to the render's budget while they live,
// and their destructors hand their contents to an iterative sweep (value.cpp), so that
// destroying a value nested a million deep does not recurse.

// Strings are immutable and shared: copying a Value never copies text.
struct StringData {
    std::string text;
    Charge charge;
    explicit StringData(std::string s);
};

struct ListData {
    std::vector<Value> items;  // set once, then account()
    bool tuple = false;  // prints as (a, b)
    Charge charge;
    void account();  // charges the items' storage
    ~ListData();
};

struct DictData {
    std::vector<std::pair<Value, Value>> items;  // insertion order; change through set/append/assign
    const Value* find(const Value& key) const;
    const Value* find(const std::string& key) const;
    void set(const Value& key, Value value);
    void append(Value key, Value value);  // a key known to be new
    void assign(std::vector<std::pair<Value, Value>> all);
    void clear();  // sweeps the contents iteratively
    DictData() = default;
    DictData(const DictData&) = delete;
    DictData& operator=(const DictData&) = delete;
    ~DictData();

private:
    Charge charge_;
    size_t chargedCapacity_ = 0;
    void account();
};

struct CallArgs {
    std::vector<Value> positional;
    std::vector<std::pair<std::string, Value>> named;
};

struct Function {
    std::string name;
    std::function<Value(CallArgs&)> call;
    Charge charge;
};

struct NamespaceData {
    DictData attributes;
    bool assignable = true;  // namespace() objects; `loop` is read-only
    Charge charge;
    NamespaceData() { charge.add(2 * kObjectBytes); }
};

struct UndefinedValue {
    std::string name;  // what was looked up, for error messages
};
struct NoneValue {};

class Value {
public:
    enum class Kind { Undefined, None, Bool, Int, Float, String, List, Dict, Function, Namespace };

    Value() : v_(UndefinedValue{}) {}
    Value(NoneValue) : v_(NoneValue{}) {}
    Value(bool b) : v_(b) {}
    Value(int i) : v_(int64_t(i)) {}
    Value(int64_t i) : v_(i) {}
    Value(double d) : v_(d) {}
    Value(std::string s) : v_(std::make_shared<const StringData>(std::move(s))) {}
    Value(const char* s) : Value(std::string(s)) {}
    Value(std::shared_ptr<ListData> l) : v_(std::move(l)) {}
    Value(std::shared_ptr<DictData> d) : v_(std::move(d)) {}
    Value(std::shared_ptr<Function> f) : v_(std::move(f)) {}
    Value(std::shared_ptr<NamespaceData> n) : v_(std::move(n)) {}

    // `name` is cut to a few hundred bytes: an Undefined is copied by value, and its
    // message may quote what the template looked up.
    static Value undefined(std::string name = {}) {
        if (name.size() > 300) name = name.substr(0, 300) + "...";
        Value v;
        v.v_ = UndefinedValue{std::move(name)};
        return v;
    }
    static Value none() { return Value(NoneValue{}); }
    static Value list(std::vector<Value> items = {}, bool tuple = false);
    static Value dict();
    static Value function(std::string name, std::function<Value(CallArgs&)> fn);

    Kind kind() const { return Kind(v_.index()); }
    bool isUndefined() const { return kind() == Kind::Undefined; }
    bool isNone() const { return kind() == Kind::None; }
    bool isBool() const { return kind() == Kind::Bool; }
    bool isInt() const { return kind() == Kind::Int; }
    bool isFloat() const { return kind() == Kind::Float; }
    bool isNumber() const { return isInt() || isFloat() || isBool(); }  // Python: bool is an int
    bool isString() const { return kind() == Kind::String; }
    bool isList() const { return kind() == Kind::List; }
    bool isDict() const { return kind() == Kind::Dict; }
    bool isFunction() const { return kind() == Kind::Function; }
    bool isNamespace() const { return kind() == Kind::Namespace; }

    bool asBool() const { return std::get<bool>(v_); }
    int64_t asInt() const;  // int or bool
    double asDouble() const;  // any number
    const std::string& asString() const { return std::get<std::shared_ptr<const StringData>>(v_)->text; }
    const ListData& asList() const { return *std::get<std::shared_ptr<ListData>>(v_); }
    const DictData& asDict() const { return *std::get<std::shared_ptr<DictData>>(v_); }
    DictData& mutableDict() { return *std::get<std::shared_ptr<DictData>>(v_); }
    const std::shared_ptr<Function>& asFunction() const { return std::get<std::shared_ptr<Function>>(v_); }
    NamespaceData& asNamespace() const { return *std::get<std::shared_ptr<NamespaceData>>(v_); }
    const std::string& undefinedName() const { return std::get<UndefinedValue>(v_).name; }

    bool truthy() const;  // Python bool()
    std::string str() const;  // Python str(); Undefined is ""
    std::string repr() const;  // Python repr() (charged to the budget as it grows)
    std::string typeName() const;  // Python type name, for messages
    bool equals(const Value& other) const;  // Python ==
    bool holdsContainer() const { return kind() >= Kind::List; }  // list, dict, function or namespace
    bool sameAs(const Value& other) const;  // Python `is`

    // Throws cairn::Error when `j` is nested deeper than maxDepth.
    static Value fromJson(const nlohmann::ordered_json& j, uint32_t maxDepth = kDefaultMaxDepth);

private:
    std::variant<UndefinedValue, NoneValue, bool, int64_t, double, std::shared_ptr<const StringData>,
                 std::shared_ptr<ListData>, std::shared_ptr<DictData>, std::shared_ptr<Function>,
                 std::shared_ptr<NamespaceData>>
        v_;
};

// Python's float repr (shortest round-trip digits, "1.0", "1e+20", "inf", "nan").
std::string formatFloat(double d);
// Python's repr of a str: single quotes unless the text has ' and no ".
std::string reprString(const std::string& s);
// Python `a < b` (numbers, strings, lists); throws TemplateError for other pairs.
int compareValues(const Value& a, const Value& b);
// Destroys values without recursion: a container is queued and destroyed once the
// destructor that released it has returned (see ListData, DictData, Scope).
void sweep(Value& v);
void finishSweep();

// The first `max` code points of repr(v), "..." when cut: for error messages.
std::string shortRepr(const Value& v, size_t max = 60);
// Python json.dumps(value, ensure_ascii, indent, separators, sort_keys). indent < 0 means None.
struct JsonDumpOptions {
    bool ensureAscii = false;
    int indent = -1;
    std::string indentString;  // used when indent was given as a string
    std::string itemSeparator = ", ";
    std::string keySeparator = ": ";
    bool sortKeys = false;
};
std::string dumpJson(const Value& v, const JsonDumpOptions& options);

}  // namespace cairn::chat
