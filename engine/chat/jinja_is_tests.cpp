// Jinja's built-in `is` tests (`x is defined`, `x is string`, ...): template
// builtins, not unit tests (those are in tests/chat).
#include "builtins.h"

#include "unicode.h"

#include <map>

namespace cairn::chat {
namespace {

using TestFn = bool (*)(const Value&, const CallArgs&);

const Value& arg(const CallArgs& a, const char* test) {
    if (a.positional.empty()) raiseError(std::string("test '") + test + "' needs an argument");
    return a.positional[0];
}

// jinja2: `value % 2 == 1` and `value % 2 == 0` (1.5 is neither; a string raises).
bool remainderIs(const Value& v, int64_t r) {
    if (v.isUndefined()) raiseUndefined(v);
    return binaryOp("%", v, Value(int64_t(2))).equals(Value(r));
}

// jinja2 looks the name up in a dict: a list or dict is unhashable.
bool namedIn(const Value& v, bool (*has)(const std::string&)) {
    if ((v.isList() && !v.asList().tuple) || v.isDict()) raiseError("unhashable type: '" + v.typeName() + "'");
    return v.isString() && has(v.asString());
}

const BuiltinTable<TestFn>& tests() {
    static const BuiltinTable<TestFn> table = {
        {
            {"boolean", [](const Value& v, const CallArgs&) { return v.isBool(); }},
            {"callable", [](const Value& v, const CallArgs&) { return v.isFunction() || v.isUndefined(); }},
            {"defined", [](const Value& v, const CallArgs&) { return !v.isUndefined(); }},
            {"divisibleby",
             [](const Value& v, const CallArgs& a) {
                 return binaryOp("%", v, arg(a, "divisibleby")).equals(Value(int64_t(0)));
             }},
            {"eq", [](const Value& v, const CallArgs& a) { return v.equals(arg(a, "eq")); }},
            {"escaped", [](const Value&, const CallArgs&) { return false; }},
            {"even", [](const Value& v, const CallArgs&) { return remainderIs(v, 0); }},
            {"false", [](const Value& v, const CallArgs&) { return v.isBool() && !v.asBool(); }},
            {"filter", [](const Value& v, const CallArgs&) { return namedIn(v, hasFilter); }},
            {"float", [](const Value& v, const CallArgs&) { return v.isFloat(); }},
            {"ge", [](const Value& v, const CallArgs& a) { return compareValues(v, arg(a, "ge")) >= 0; }},
            {"gt", [](const Value& v, const CallArgs& a) { return compareValues(v, arg(a, "gt")) > 0; }},
            {"in", [](const Value& v, const CallArgs& a) { return contains(arg(a, "in"), v); }},
            {"integer", [](const Value& v, const CallArgs&) { return v.isInt(); }},
            {"iterable",
             [](const Value& v, const CallArgs&) {
                 return v.isString() || v.isList() || v.isDict() || v.isUndefined();
             }},
            {"le", [](const Value& v, const CallArgs& a) { return compareValues(v, arg(a, "le")) <= 0; }},
            {"lower",
             [](const Value& v, const CallArgs&) {
                 CallArgs none;
                 return callMethod(Value(v.str()), "islower", none).asBool();
             }},
            {"lt", [](const Value& v, const CallArgs& a) { return compareValues(v, arg(a, "lt")) < 0; }},
            {"mapping", [](const Value& v, const CallArgs&) { return v.isDict(); }},
            {"ne", [](const Value& v, const CallArgs& a) { return !v.equals(arg(a, "ne")); }},
            {"none", [](const Value& v, const CallArgs&) { return v.isNone(); }},
            {"number", [](const Value& v, const CallArgs&) { return v.isNumber(); }},
            {"odd", [](const Value& v, const CallArgs&) { return remainderIs(v, 1); }},
            {"sameas", [](const Value& v, const CallArgs& a) { return v.sameAs(arg(a, "sameas")); }},
            {"sequence",
             [](const Value& v, const CallArgs&) {
                 return v.isString() || v.isList() || v.isDict() || v.isUndefined();
             }},
            {"string", [](const Value& v, const CallArgs&) { return v.isString(); }},
            {"test", [](const Value& v, const CallArgs&) { return namedIn(v, hasTest); }},
            {"true", [](const Value& v, const CallArgs&) { return v.isBool() && v.asBool(); }},
            {"undefined", [](const Value& v, const CallArgs&) { return v.isUndefined(); }},
            {"upper",
             [](const Value& v, const CallArgs&) {
                 CallArgs none;
                 return callMethod(Value(v.str()), "isupper", none).asBool();
             }},
        },
        {{"==", "eq"},
         {"equalto", "eq"},
         {"!=", "ne"},
         {">", "gt"},
         {"greaterthan", "gt"},
         {">=", "ge"},
         {"<", "lt"},
         {"lessthan", "lt"},
         {"<=", "le"}}};
    return table;
}

}  // namespace

bool hasTest(const std::string& name) { return tests().find(name) != nullptr; }

bool applyTest(const std::string& name, const Value& input, CallArgs& args) {
    return tests().get(name, "test")(input, args);
}

}  // namespace cairn::chat
