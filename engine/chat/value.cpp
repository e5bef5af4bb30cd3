#include "value.h"

#include "cairn/chat_template.h"
#include "unicode.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace cairn::chat {

const Value* DictData::find(const Value& key) const {
    for (const auto& [k, v] : items)
        if (k.equals(key)) return &v;
    return nullptr;
}

const Value* DictData::find(const std::string& key) const {
    for (const auto& [k, v] : items)
        if (k.isString() && k.asString() == key) return &v;
    return nullptr;
}

void DictData::set(const Value& key, Value value) {
    for (auto& [k, v] : items)
        if (k.equals(key)) { v = std::move(value); return; }
    items.emplace_back(key, std::move(value));
}

Value Value::list(std::vector<Value> items, bool tuple) {
    auto l = std::make_shared<ListData>();
    l->items = std::move(items);
    l->tuple = tuple;
    return Value(std::move(l));
}

Value Value::dict() { return Value(std::make_shared<DictData>()); }

Value Value::function(std::string name, std::function<Value(CallArgs&)> fn) {
    auto f = std::make_shared<Function>();
    f->name = std::move(name);
    f->call = std::move(fn);
    return Value(std::move(f));
}

int64_t Value::asInt() const {
    if (isBool()) return asBool() ? 1 : 0;
    if (!isInt()) throw TemplateError("chat template", "'" + typeName() + "' object cannot be interpreted as an integer");
    return std::get<int64_t>(v_);
}

double Value::asDouble() const {
    if (isFloat()) return std::get<double>(v_);
    if (!isInt() && !isBool()) throw TemplateError("chat template", "must be real number, not " + typeName());
    return double(asInt());
}

bool Value::truthy() const {
    switch (kind()) {
    case Kind::Undefined: case Kind::None: return false;
    case Kind::Bool: return asBool();
    case Kind::Int: return asInt() != 0;
    case Kind::Float: return asDouble() != 0.0;
    case Kind::String: return !asString().empty();
    case Kind::List: return !asList().items.empty();
    case Kind::Dict: return !asDict().items.empty();
    default: return true;
    }
}

std::string formatFloat(double d) {
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
    if (d == 0) return std::signbit(d) ? "-0.0" : "0.0";
    char buf[64];
    for (int prec = 1; prec <= 17; ++prec) {
        std::snprintf(buf, sizeof buf, "%.*e", prec - 1, d);
        if (std::strtod(buf, nullptr) == d) break;
    }
    std::string s = buf;
    bool negative = s[0] == '-';
    if (negative) s.erase(0, 1);
    size_t ePos = s.find('e');
    int exponent = std::atoi(s.c_str() + ePos + 1);
    std::string digits;
    for (size_t i = 0; i < ePos; ++i)
        if (s[i] != '.') digits += s[i];
    while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
    std::string out = negative ? "-" : "";
    if (exponent >= -4 && exponent < 16) {
        if (exponent >= 0) {
            std::string intPart = digits.substr(0, std::min<size_t>(digits.size(), size_t(exponent) + 1));
            while (intPart.size() < size_t(exponent) + 1) intPart += '0';
            std::string frac = digits.size() > size_t(exponent) + 1 ? digits.substr(size_t(exponent) + 1) : "0";
            out += intPart + "." + frac;
        } else {
            out += "0." + std::string(size_t(-exponent - 1), '0') + digits;
        }
    } else {
        out += digits.substr(0, 1);
        if (digits.size() > 1) out += "." + digits.substr(1);
        char e[16];
        std::snprintf(e, sizeof e, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
        out += e;
    }
    return out;
}

std::string reprString(const std::string& s) {
    bool hasSingle = s.find('\'') != std::string::npos, hasDouble = s.find('"') != std::string::npos;
    char quote = hasSingle && !hasDouble ? '"' : '\'';
    std::string out(1, quote);
    for (char32_t c : unicode::decode(s)) {
        if (c == char32_t(quote) || c == '\\') { out += '\\'; out += char(c); }
        else if (c == '\n') out += "\\n";
        else if (c == '\r') out += "\\r";
        else if (c == '\t') out += "\\t";
        else if (c < 0x20 || c == 0x7F) {
            char b[8];
            std::snprintf(b, sizeof b, "\\x%02x", unsigned(c));
            out += b;
        } else if ((c >= 0x80 && c < 0xA0) || c == 0xAD) {
            char b[8];
            std::snprintf(b, sizeof b, "\\x%02x", unsigned(c));
            out += b;
        } else unicode::append(out, c);
    }
    out += quote;
    return out;
}

std::string Value::str() const {
    switch (kind()) {
    case Kind::Undefined: return {};
    case Kind::String: return asString();
    default: return repr();
    }
}

std::string Value::repr() const {
    switch (kind()) {
    case Kind::Undefined: return "Undefined";
    case Kind::None: return "None";
    case Kind::Bool: return asBool() ? "True" : "False";
    case Kind::Int: return std::to_string(asInt());
    case Kind::Float: return formatFloat(asDouble());
    case Kind::String: return reprString(asString());
    case Kind::List: {
        const auto& l = asList();
        std::string out = l.tuple ? "(" : "[";
        for (size_t i = 0; i < l.items.size(); ++i) out += (i ? ", " : "") + l.items[i].repr();
        if (l.tuple && l.items.size() == 1) out += ",";
        return out + (l.tuple ? ")" : "]");
    }
    case Kind::Dict: {
        std::string out = "{";
        bool first = true;
        for (const auto& [k, v] : asDict().items) {
            out += (first ? "" : ", ") + k.repr() + ": " + v.repr();
            first = false;
        }
        return out + "}";
    }
    case Kind::Function: return "<function " + asFunction()->name + ">";
    case Kind::Namespace: {
        std::string out = "<Namespace {";
        bool first = true;
        for (const auto& [k, v] : asNamespace().attributes.items) {
            out += (first ? "" : ", ") + k.repr() + ": " + v.repr();
            first = false;
        }
        return out + "}>";
    }
    }
    return {};
}

std::string Value::typeName() const {
    switch (kind()) {
    case Kind::Undefined: return "Undefined";
    case Kind::None: return "NoneType";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::String: return "str";
    case Kind::List: return asList().tuple ? "tuple" : "list";
    case Kind::Dict: return "dict";
    case Kind::Function: return "function";
    case Kind::Namespace: return "Namespace";
    }
    return "object";
}

bool Value::equals(const Value& o) const {
    if (isNumber() && o.isNumber()) {
        if (isFloat() || o.isFloat()) return asDouble() == o.asDouble();
        return asInt() == o.asInt();
    }
    if (kind() != o.kind()) return false;
    switch (kind()) {
    case Kind::Undefined: case Kind::None: return true;
    case Kind::String: return asString() == o.asString();
    case Kind::List: {
        const auto &a = asList().items, &b = o.asList().items;
        if (asList().tuple != o.asList().tuple || a.size() != b.size()) return false;
        for (size_t i = 0; i < a.size(); ++i)
            if (!a[i].equals(b[i])) return false;
        return true;
    }
    case Kind::Dict: {
        const auto &a = asDict(), &b = o.asDict();
        if (a.items.size() != b.items.size()) return false;
        for (const auto& [k, v] : a.items) {
            const Value* other = b.find(k);
            if (!other || !other->equals(v)) return false;
        }
        return true;
    }
    default: return sameAs(o);
    }
}

bool Value::sameAs(const Value& o) const {
    if (kind() != o.kind()) return false;
    switch (kind()) {
    case Kind::Undefined: case Kind::None: return true;
    case Kind::Bool: return asBool() == o.asBool();
    case Kind::Int: return asInt() == o.asInt();
    case Kind::Float: return asDouble() == o.asDouble();
    case Kind::String: return asString() == o.asString();
    case Kind::List: return &asList() == &o.asList();
    case Kind::Dict: return &asDict() == &o.asDict();
    case Kind::Function: return asFunction() == o.asFunction();
    case Kind::Namespace: return &asNamespace() == &o.asNamespace();
    }
    return false;
}

int compareValues(const Value& a, const Value& b) {
    if (a.isNumber() && b.isNumber()) {
        if (a.isFloat() || b.isFloat()) {
            double x = a.asDouble(), y = b.asDouble();
            return x < y ? -1 : (x > y ? 1 : 0);
        }
        int64_t x = a.asInt(), y = b.asInt();
        return x < y ? -1 : (x > y ? 1 : 0);
    }
    if (a.isString() && b.isString()) {
        int c = a.asString().compare(b.asString());  // UTF-8 byte order = code point order
        return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    if (a.isList() && b.isList() && a.asList().tuple == b.asList().tuple) {
        const auto &x = a.asList().items, &y = b.asList().items;
        for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
            if (x[i].equals(y[i])) continue;
            return compareValues(x[i], y[i]);
        }
        return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
    }
    throw TemplateError("chat template", "'<' not supported between instances of '" + a.typeName() + "' and '" +
                                             b.typeName() + "'");
}

Value Value::fromJson(const nlohmann::ordered_json& j) {
    switch (j.type()) {
    case nlohmann::ordered_json::value_t::null: return none();
    case nlohmann::ordered_json::value_t::boolean: return Value(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return Value(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
        uint64_t u = j.get<uint64_t>();
        if (u > uint64_t(INT64_MAX)) return Value(double(u));
        return Value(int64_t(u));
    }
    case nlohmann::ordered_json::value_t::number_float: return Value(j.get<double>());
    case nlohmann::ordered_json::value_t::string: return Value(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
        std::vector<Value> items;
        items.reserve(j.size());
        for (const auto& e : j) items.push_back(fromJson(e));
        return list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
        Value d = dict();
        for (const auto& [k, v] : j.items()) d.mutableDict().items.emplace_back(Value(k), fromJson(v));
        return d;
    }
    default: return none();
    }
}

namespace {

void dumpString(std::string& out, const std::string& s, bool ensureAscii) {
    out += '"';
    for (char32_t c : unicode::decode(s)) {
        switch (c) {
        case '"': out += "\\\""; continue;
        case '\\': out += "\\\\"; continue;
        case '\n': out += "\\n"; continue;
        case '\r': out += "\\r"; continue;
        case '\t': out += "\\t"; continue;
        case '\b': out += "\\b"; continue;
        case '\f': out += "\\f"; continue;
        default: break;
        }
        char b[16];
        if (c < 0x20 || (ensureAscii && c > 0x7E)) {
            if (c >= 0x10000) {
                char32_t v = c - 0x10000;
                std::snprintf(b, sizeof b, "\\u%04x\\u%04x", unsigned(0xD800 + (v >> 10)), unsigned(0xDC00 + (v & 0x3FF)));
            } else {
                std::snprintf(b, sizeof b, "\\u%04x", unsigned(c));
            }
            out += b;
        } else {
            unicode::append(out, c);
        }
    }
    out += '"';
}

std::string jsonKey(const Value& k) {
    switch (k.kind()) {
    case Value::Kind::String: return k.asString();
    case Value::Kind::None: return "null";
    case Value::Kind::Bool: return k.asBool() ? "true" : "false";
    case Value::Kind::Int: return std::to_string(k.asInt());
    case Value::Kind::Float: return formatFloat(k.asDouble());
    default:
        throw TemplateError("chat template", "keys must be str, int, float, bool or None, not " + k.typeName());
    }
}

void dumpValue(std::string& out, const Value& v, const JsonDumpOptions& o, int depth) {
    bool pretty = o.indent >= 0 || !o.indentString.empty();
    auto newline = [&](int level) {
        out += '\n';
        for (int i = 0; i < level; ++i) out += o.indentString.empty() ? std::string(size_t(o.indent), ' ') : o.indentString;
    };
    if (depth > 200) throw TemplateError("chat template", "tojson: value nested too deeply");
    switch (v.kind()) {
    case Value::Kind::None: out += "null"; return;
    case Value::Kind::Bool: out += v.asBool() ? "true" : "false"; return;
    case Value::Kind::Int: out += std::to_string(v.asInt()); return;
    case Value::Kind::Float: {
        double d = v.asDouble();
        if (std::isnan(d)) out += "NaN";
        else if (std::isinf(d)) out += d < 0 ? "-Infinity" : "Infinity";
        else out += formatFloat(d);
        return;
    }
    case Value::Kind::String: dumpString(out, v.asString(), o.ensureAscii); return;
    case Value::Kind::List: {
        const auto& items = v.asList().items;
        if (items.empty()) { out += "[]"; return; }
        out += '[';
        for (size_t i = 0; i < items.size(); ++i) {
            if (i) out += o.itemSeparator;
            if (pretty) newline(depth + 1);
            dumpValue(out, items[i], o, depth + 1);
        }
        if (pretty) newline(depth);
        out += ']';
        return;
    }
    case Value::Kind::Dict: {
        std::vector<std::pair<std::string, const Value*>> entries;
        for (const auto& [k, val] : v.asDict().items) entries.emplace_back(jsonKey(k), &val);
        if (entries.empty()) { out += "{}"; return; }
        if (o.sortKeys)
            std::stable_sort(entries.begin(), entries.end(), [](auto& a, auto& b) { return a.first < b.first; });
        out += '{';
        for (size_t i = 0; i < entries.size(); ++i) {
            if (i) out += o.itemSeparator;
            if (pretty) newline(depth + 1);
            dumpString(out, entries[i].first, o.ensureAscii);
            out += o.keySeparator;
            dumpValue(out, *entries[i].second, o, depth + 1);
        }
        if (pretty) newline(depth);
        out += '}';
        return;
    }
    default:
        throw TemplateError("chat template", "Object of type " + v.typeName() + " is not JSON serializable");
    }
}

} // namespace

std::string dumpJson(const Value& v, const JsonDumpOptions& options) {
    std::string out;
    dumpValue(out, v, options, 0);
    return out;
}

} // namespace cairn::chat
