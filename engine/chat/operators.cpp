// Operators, attribute/item access and iteration with Python and jinja2 semantics.
#include "builtins.h"

#include "cairn/chat_template.h"
#include "unicode.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

namespace cairn::chat {

namespace {

[[noreturn]] void unsupported(const std::string& op, const Value& a, const Value& b) {
    raiseError("unsupported operand type(s) for " + op + ": '" + a.typeName() + "' and '" + b.typeName() + "'");
}

template <class Op>
int64_t checkedInt(Op op, int64_t a, int64_t b) {
    int64_t r = 0;
    if (op(a, b, &r)) raiseError("integer overflow");
    return r;
}
bool addOverflow(int64_t a, int64_t b, int64_t* r) { return __builtin_add_overflow(a, b, r); }
bool subOverflow(int64_t a, int64_t b, int64_t* r) { return __builtin_sub_overflow(a, b, r); }
bool mulOverflow(int64_t a, int64_t b, int64_t* r) { return __builtin_mul_overflow(a, b, r); }

// `bytes` times `n`, saturating (what a repetition would allocate, charged before it does).
uint64_t times(uint64_t bytes, uint64_t n) {
    uint64_t r;
    return __builtin_mul_overflow(bytes, n, &r) ? UINT64_MAX : r;
}

Value repeat(const Value& seq, int64_t n) {
    if (n < 0) n = 0;
    if (seq.isString()) {
        const std::string& s = seq.asString();
        ensureBytes(times(s.size(), uint64_t(n)));
        workBytes(s.size() * size_t(n));
        std::string out;
        out.reserve(s.size() * size_t(n));
        for (int64_t i = 0; i < n; ++i) out += s;
        return Value(std::move(out));
    }
    const auto& l = seq.asList();
    ensureBytes(times(l.items.size() * sizeof(Value), uint64_t(n)));
    work(l.items.size() * size_t(n));
    std::vector<Value> out;
    out.reserve(l.items.size() * size_t(n));
    for (int64_t i = 0; i < n; ++i) out.insert(out.end(), l.items.begin(), l.items.end());
    return Value::list(std::move(out), l.tuple);
}

// a + b for strings, charged before the result is allocated.
Value concat(const std::string& a, const std::string& b) {
    ensureBytes(uint64_t(a.size()) + b.size());
    workBytes(a.size() + b.size());
    std::string s;
    s.reserve(a.size() + b.size());
    s += a;
    s += b;
    return Value(std::move(s));
}

double pyFloorMod(double a, double b) {
    double m = std::fmod(a, b);
    if (m != 0 && ((m < 0) != (b < 0))) m += b;
    return m;
}

// printf-style `str % args` for the common conversions.
std::string percentFormat(const std::string& fmt, const Value& args) {
    std::vector<Value> list;
    if (args.isList() && args.asList().tuple) list = args.asList().items;
    else list.push_back(args);
    size_t next = 0;
    std::string out;
    for (size_t i = 0; i < fmt.size(); ++i) {
        if (i % 4096 == 0) ensureBytes(out.size() + 4096);
        if (fmt[i] != '%') {
            out += fmt[i];
            continue;
        }
        if (++i >= fmt.size()) raiseError("incomplete format");
        if (fmt[i] == '%') {
            out += '%';
            continue;
        }
        // %(name)s takes the value from a mapping.
        const Value* named = nullptr;
        if (fmt[i] == '(') {
            size_t close = fmt.find(')', i);
            if (close == std::string::npos) raiseError("incomplete format key");
            if (!args.isDict()) raiseError("format requires a mapping");
            named = args.asDict().find(fmt.substr(i + 1, close - i - 1));
            if (!named) raiseError("KeyError: " + shortRepr(Value(fmt.substr(i + 1, close - i - 1))));
            i = close + 1;
        }
        std::string spec = "%";
        while (i < fmt.size() && std::string("-+ #0123456789.").find(fmt[i]) != std::string::npos) spec += fmt[i++];
        if (i >= fmt.size()) raiseError("incomplete format");
        char conv = fmt[i];
        if (!named && next >= list.size()) raiseError("not enough arguments for format string");
        const Value& v = named ? *named : list[next++];
        char buf[512];
        switch (conv) {
        case 's': {
            std::string piece = v.str();
            ensureBytes(out.size() + piece.size());
            out += piece;
            break;
        }
        case 'r': {
            std::string piece = v.repr();
            ensureBytes(out.size() + piece.size());
            out += piece;
            break;
        }
        case 'd':
        case 'i':
            if (!v.isNumber()) raiseError("%d format: a real number is required, not " + v.typeName());
            std::snprintf(buf, sizeof buf, (spec + "lld").c_str(),
                          (long long)(v.isFloat() ? int64_t(v.asDouble()) : v.asInt()));
            out += buf;
            break;
        case 'f':
        case 'F':
        case 'e':
        case 'E':
        case 'g':
        case 'G':
            if (!v.isNumber()) raiseError("must be real number, not " + v.typeName());
            std::snprintf(buf, sizeof buf, (spec + conv).c_str(), v.asDouble());
            out += buf;
            break;
        case 'x':
        case 'X':
        case 'o':
            if (!v.isInt() && !v.isBool()) raiseError("%x format: an integer is required");
            std::snprintf(buf, sizeof buf, (spec + "ll" + conv).c_str(), (long long)v.asInt());
            out += buf;
            break;
        default: raiseError(std::string("unsupported format character '") + conv + "'");
        }
    }
    // Python complains about unused arguments unless they came as a mapping (a dict or a list).
    if (next < list.size() && !args.isDict() && !(args.isList() && !args.asList().tuple))
        raiseError("not all arguments converted during string formatting");
    return out;
}

Value boundMethod(const Value& obj, const std::string& name) {
    return Value::function(name, [obj, name](CallArgs& args) { return callMethod(obj, name, args); });
}

// "'<type> object'" (built with += : GCC 12 warns falsely on "'" + std::string&&).
std::string quotedObjectName(const Value& v) {
    std::string q = "'";
    q += v.typeName();
    q += " object'";
    return q;
}

}  // namespace

void raiseError(const std::string& message) {
    // One line of bounded length, whatever the template put in it (raise_exception(huge)).
    constexpr size_t kMaxMessage = 300;
    std::u32string cps = unicode::decode(std::string_view(message).substr(0, kMaxMessage * 4));
    bool cut = cps.size() > kMaxMessage || message.size() > kMaxMessage * 4;
    if (cps.size() > kMaxMessage) cps.resize(kMaxMessage);
    for (auto& c : cps)
        if (c < 0x20 || c == 0x7F) c = ' ';
    throw TemplateError("chat template", unicode::encode(cps) + (cut ? "..." : ""));
}

void raiseUndefined(const Value& undefined) {
    const std::string& name = undefined.undefinedName();
    raiseError(name.empty() ? "value is undefined" : name);
}

Params::Params(const std::string& function, const CallArgs& args, std::initializer_list<const char*> names)
    : function_(function), values_(names.size()), given_(names.size(), false) {
    if (args.positional.size() > names.size())
        raiseError(function + "() takes at most " + std::to_string(names.size()) + " arguments (" +
                   std::to_string(args.positional.size()) + " given)");
    for (size_t i = 0; i < args.positional.size(); ++i) {
        values_[i] = args.positional[i];
        given_[i] = true;
    }
    for (const auto& [key, value] : args.named) {
        size_t idx = 0;
        bool found = false;
        for (const char* n : names) {
            if (key == n) {
                found = true;
                break;
            }
            ++idx;
        }
        if (!found) raiseError(function + "() got an unexpected keyword argument '" + key + "'");
        if (given_[idx]) raiseError(function + "() got multiple values for argument '" + key + "'");
        values_[idx] = value;
        given_[idx] = true;
    }
}

Value binaryOp(const std::string& op, const Value& a, const Value& b) {
    if (op == "~") {
        if (a.isString() && b.isString()) return concat(a.asString(), b.asString());
        return concat(a.isString() ? a.asString() : a.str(), b.isString() ? b.asString() : b.str());
    }
    if (a.isUndefined()) raiseUndefined(a);
    if (b.isUndefined()) raiseUndefined(b);
    bool nums = a.isNumber() && b.isNumber();
    bool anyFloat = a.isFloat() || b.isFloat();
    if (op == "+") {
        if (nums) {
            if (anyFloat) return Value(a.asDouble() + b.asDouble());
            return Value(checkedInt(addOverflow, a.asInt(), b.asInt()));
        }
        if (a.isString() && b.isString()) return concat(a.asString(), b.asString());
        if (a.isList() && b.isList() && a.asList().tuple == b.asList().tuple) {
            ensureBytes((a.asList().items.size() + b.asList().items.size()) * sizeof(Value));
            work(a.asList().items.size() + b.asList().items.size());
            std::vector<Value> items;
            items.reserve(a.asList().items.size() + b.asList().items.size());
            items = a.asList().items;
            items.insert(items.end(), b.asList().items.begin(), b.asList().items.end());
            return Value::list(std::move(items), a.asList().tuple);
        }
        if (a.isString()) raiseError("can only concatenate str (not \"" + b.typeName() + "\") to str");
        unsupported(op, a, b);
    }
    if (op == "-") {
        if (!nums) unsupported(op, a, b);
        if (anyFloat) return Value(a.asDouble() - b.asDouble());
        return Value(checkedInt(subOverflow, a.asInt(), b.asInt()));
    }
    if (op == "*") {
        if (nums) {
            if (anyFloat) return Value(a.asDouble() * b.asDouble());
            return Value(checkedInt(mulOverflow, a.asInt(), b.asInt()));
        }
        if ((a.isString() || a.isList()) && (b.isInt() || b.isBool())) return repeat(a, b.asInt());
        if ((b.isString() || b.isList()) && (a.isInt() || a.isBool())) return repeat(b, a.asInt());
        unsupported(op, a, b);
    }
    if (op == "/") {
        if (!nums) unsupported(op, a, b);
        if (b.asDouble() == 0) raiseError("division by zero");
        return Value(a.asDouble() / b.asDouble());
    }
    if (op == "//") {
        if (!nums) unsupported(op, a, b);
        if (b.asDouble() == 0) raiseError("integer division or modulo by zero");
        if (anyFloat) return Value(std::floor(a.asDouble() / b.asDouble()));
        int64_t x = a.asInt(), y = b.asInt();
        if (x == std::numeric_limits<int64_t>::min() && y == -1) raiseError("integer overflow");
        int64_t q = x / y;
        if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
        return Value(q);
    }
    if (op == "%") {
        if (a.isString()) return Value(percentFormat(a.asString(), b));
        if (!nums) unsupported(op, a, b);
        if (b.asDouble() == 0) raiseError("integer division or modulo by zero");
        if (anyFloat) return Value(pyFloorMod(a.asDouble(), b.asDouble()));
        int64_t x = a.asInt(), y = b.asInt();
        if (y == -1) return Value(int64_t(0));
        int64_t m = x % y;
        if (m != 0 && ((m < 0) != (y < 0))) m += y;
        return Value(m);
    }
    if (op == "**") {
        if (!nums) unsupported(op, a, b);
        if (!anyFloat && b.asInt() >= 0) {
            // Square-and-multiply: O(log e) steps, overflow is an error (Python would grow a bignum).
            int64_t base = a.asInt(), e = b.asInt(), r = 1;
            while (e > 0) {
                if ((e & 1) && __builtin_mul_overflow(r, base, &r)) raiseError("integer overflow");
                e >>= 1;
                if (e > 0 && __builtin_mul_overflow(base, base, &base)) {
                    if (r == 0) break;
                    raiseError("integer overflow");
                }
            }
            return Value(r);
        }
        return Value(std::pow(a.asDouble(), b.asDouble()));
    }
    raiseError("unknown operator " + op);
}

Value negate(const Value& v) {
    if (v.isUndefined()) raiseUndefined(v);
    if (v.isFloat()) return Value(-v.asDouble());
    if (v.isNumber()) {
        if (v.asInt() == std::numeric_limits<int64_t>::min()) raiseError("integer overflow");
        return Value(-v.asInt());
    }
    raiseError("bad operand type for unary -: '" + v.typeName() + "'");
}

bool contains(const Value& container, const Value& item) {
    switch (container.kind()) {
    case Value::Kind::String:
        if (!item.isString()) raiseError("'in <string>' requires string as left operand, not " + item.typeName());
        workBytes(container.asString().size());
        return container.asString().find(item.asString()) != std::string::npos;
    case Value::Kind::List:
        work(container.asList().items.size());
        for (const auto& v : container.asList().items)
            if (v.equals(item)) return true;
        return false;
    case Value::Kind::Dict: return container.asDict().find(item) != nullptr;
    case Value::Kind::Undefined: return false;
    default: raiseError("argument of type '" + container.typeName() + "' is not iterable");
    }
}

std::vector<Value> iterate(const Value& v) {
    switch (v.kind()) {
    case Value::Kind::Undefined: return {};
    case Value::Kind::String: {
        // One string value per code point: charged before they exist (a 64 MiB string
        // would need gigabytes).
        size_t n = unicode::length(v.asString());
        ensureBytes(n * (sizeof(Value) + kObjectBytes + 16));
        workBytes(v.asString().size());
        work(n);
        std::vector<Value> out;
        out.reserve(n);
        for (char32_t c : unicode::decode(v.asString())) {
            std::string s;
            unicode::append(s, c);
            out.emplace_back(std::move(s));
        }
        return out;
    }
    case Value::Kind::List:
        work(v.asList().items.size());
        ensureBytes(v.asList().items.size() * sizeof(Value));
        return v.asList().items;
    case Value::Kind::Dict: {
        work(v.asDict().items.size());
        ensureBytes(v.asDict().items.size() * sizeof(Value));
        std::vector<Value> out;
        out.reserve(v.asDict().items.size());
        for (const auto& kv : v.asDict().items) out.push_back(kv.first);
        return out;
    }
    default: raiseError("'" + v.typeName() + "' object is not iterable");
    }
}

size_t length(const Value& v) {
    switch (v.kind()) {
    case Value::Kind::Undefined: return 0;
    case Value::Kind::String: workBytes(v.asString().size()); return unicode::length(v.asString());
    case Value::Kind::List: return v.asList().items.size();
    case Value::Kind::Dict: return v.asDict().items.size();
    default: raiseError("object of type '" + v.typeName() + "' has no len()");
    }
}

Value getAttribute(const Value& obj, const std::string& name) {
    switch (obj.kind()) {
    case Value::Kind::Undefined: raiseUndefined(obj);
    case Value::Kind::Dict:
        if (isMethod(obj, name)) return boundMethod(obj, name);
        if (const Value* v = obj.asDict().find(name)) return *v;
        break;
    case Value::Kind::Namespace:
        if (const Value* v = obj.asNamespace().attributes.find(name)) return *v;
        break;
    case Value::Kind::String:
    case Value::Kind::List:
        if (isMethod(obj, name)) return boundMethod(obj, name);
        break;
    default: break;
    }
    return Value::undefined(quotedObjectName(obj) + " has no attribute '" + name + "'");
}

Value getItem(const Value& obj, const Value& key) {
    switch (obj.kind()) {
    case Value::Kind::Undefined: raiseUndefined(obj);
    case Value::Kind::List:
        if (key.isInt() || key.isBool()) {
            const auto& items = obj.asList().items;
            int64_t i = key.asInt(), n = int64_t(items.size());
            if (i < 0) i += n;
            if (i >= 0 && i < n) return items[size_t(i)];
            return Value::undefined(quotedObjectName(obj) + " has no element " + std::to_string(key.asInt()));
        }
        break;
    case Value::Kind::String:
        if (key.isInt() || key.isBool()) {
            workBytes(obj.asString().size());
            auto cps = unicode::decode(obj.asString());
            int64_t i = key.asInt(), n = int64_t(cps.size());
            if (i < 0) i += n;
            if (i >= 0 && i < n) return Value(unicode::encode(cps.substr(size_t(i), 1)));
            return Value::undefined("'str object' has no element " + std::to_string(key.asInt()));
        }
        break;
    case Value::Kind::Dict:
        if (const Value* v = obj.asDict().find(key)) return *v;
        break;
    default: break;
    }
    if (key.isString()) return getAttribute(obj, key.asString());
    return Value::undefined(quotedObjectName(obj) + " has no element " + shortRepr(key));
}

Value getSlice(const Value& obj, const Value& startV, const Value& stopV, const Value& stepV) {
    if (obj.isUndefined()) raiseUndefined(obj);
    auto index = [](const Value& v, const char* what) -> std::optional<int64_t> {
        if (v.isUndefined() || v.isNone()) return std::nullopt;
        if (!v.isInt() && !v.isBool()) raiseError(std::string("slice ") + what + " must be an integer or None");
        return v.asInt();
    };
    auto startO = index(startV, "start"), stopO = index(stopV, "stop"), stepO = index(stepV, "step");
    int64_t step = stepO.value_or(1);
    if (step == 0) raiseError("slice step cannot be zero");
    auto pick = [&](int64_t n, auto&& take) {
        auto clamp = [&](std::optional<int64_t> v, int64_t dflt) {
            if (!v) return dflt;
            int64_t x = *v;
            if (x < 0) x += n;
            if (step > 0) return std::clamp<int64_t>(x, 0, n);
            return std::clamp<int64_t>(x, -1, n - 1);
        };
        int64_t start = clamp(startO, step > 0 ? 0 : n - 1), stop = clamp(stopO, step > 0 ? n : -1);
        // Indices start + k*step in 128 bits: a huge step must not overflow past the end.
        __int128 span = step > 0 ? __int128(stop) - start : __int128(start) - stop;
        __int128 stride = step > 0 ? __int128(step) : -__int128(step);
        int64_t count = span <= 0 ? 0 : int64_t((span + stride - 1) / stride);
        work(uint64_t(count));
        for (int64_t k = 0; k < count; ++k) take(size_t(start + __int128(k) * step));
    };
    if (obj.isString()) {
        workBytes(obj.asString().size());
        auto cps = unicode::decode(obj.asString());
        std::u32string out;
        pick(int64_t(cps.size()), [&](size_t i) { out.push_back(cps[i]); });
        return Value(unicode::encode(out));
    }
    if (obj.isList()) {
        const auto& items = obj.asList().items;
        std::vector<Value> out;
        pick(int64_t(items.size()), [&](size_t i) { out.push_back(items[i]); });
        return Value::list(std::move(out), obj.asList().tuple);
    }
    raiseError("'" + obj.typeName() + "' object is not subscriptable");
}

Value callValue(const Value& callee, CallArgs& args) {
    if (callee.isFunction()) return callee.asFunction()->call(args);
    if (callee.isUndefined()) raiseUndefined(callee);
    std::string what = "'";
    what += callee.typeName();
    raiseError(what + "' object is not callable");
}

}  // namespace cairn::chat
