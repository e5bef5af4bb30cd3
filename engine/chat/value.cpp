#include "value.h"

#include "cairn/chat_template.h"
#include "unicode.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace cairn::chat {

namespace {

// Containers released while another container is being destroyed wait here, so that
// destruction is a loop rather than a recursion as deep as the value.
thread_local std::vector<Value> t_swept;
thread_local bool t_sweeping = false;

}  // namespace

void sweep(Value& v) {
    if (v.holdsContainer()) t_swept.push_back(std::move(v));
    v = Value();
}

void finishSweep() {
    if (t_sweeping) return;
    t_sweeping = true;
    while (!t_swept.empty()) {
        Value v = std::move(t_swept.back());
        t_swept.pop_back();
    }  // v's destructor may queue more
    t_sweeping = false;
    if (t_swept.capacity() > 4096) std::vector<Value>().swap(t_swept);
}

StringData::StringData(std::string s) : text(std::move(s)) { charge.add(kObjectBytes + text.size()); }

void ListData::account() { charge.add(kObjectBytes + items.capacity() * sizeof(Value)); }

ListData::~ListData() {
    for (auto& v : items) sweep(v);
    finishSweep();
}

DictData::~DictData() { clear(); }

void DictData::clear() {
    for (auto& [k, v] : items) {
        sweep(k);
        sweep(v);
    }
    items.clear();
    finishSweep();
}

void DictData::account() {
    if (items.capacity() <= chargedCapacity_) return;
    charge_.add((chargedCapacity_ ? 0 : kObjectBytes) + (items.capacity() - chargedCapacity_) * sizeof(items[0]));
    chargedCapacity_ = items.capacity();
}

const Value* DictData::find(const Value& key) const {
    workComparisons(items.size());
    for (const auto& [k, v] : items)
        if (k.equals(key)) return &v;
    return nullptr;
}

const Value* DictData::find(const std::string& key) const {
    workComparisons(items.size());
    for (const auto& [k, v] : items)
        if (k.isString() && k.asString() == key) return &v;
    return nullptr;
}

void DictData::set(const Value& key, Value value) {
    workComparisons(items.size());
    for (auto& [k, v] : items)
        if (k.equals(key)) {
            v = std::move(value);
            return;
        }
    append(key, std::move(value));
}

void DictData::append(Value key, Value value) {
    if (items.size() == items.capacity()) {
        // Charge the grown storage before the vector allocates it.
        ensureBytes(std::max<size_t>(4, items.capacity() * 2) * sizeof(items[0]));
    }
    items.emplace_back(std::move(key), std::move(value));
    account();
}

void DictData::assign(std::vector<std::pair<Value, Value>> all) {
    clear();
    items = std::move(all);
    account();
}

Value Value::list(std::vector<Value> items, bool tuple) {
    auto l = std::make_shared<ListData>();
    l->items = std::move(items);
    l->tuple = tuple;
    l->account();
    return Value(std::move(l));
}

Value Value::dict() { return Value(std::make_shared<DictData>()); }

Value Value::function(std::string name, std::function<Value(CallArgs&)> fn) {
    auto f = std::make_shared<Function>();
    f->name = std::move(name);
    f->call = std::move(fn);
    f->charge.add(2 * kObjectBytes + f->name.size());
    return Value(std::move(f));
}

int64_t Value::asInt() const {
    if (isBool()) return asBool() ? 1 : 0;
    if (!isInt())
        throw TemplateError("chat template", "'" + typeName() + "' object cannot be interpreted as an integer");
    return std::get<int64_t>(v_);
}

double Value::asDouble() const {
    if (isFloat()) return std::get<double>(v_);
    if (!isInt() && !isBool()) throw TemplateError("chat template", "must be real number, not " + typeName());
    return double(asInt());
}

bool Value::truthy() const {
    switch (kind()) {
    case Kind::Undefined:
    case Kind::None: return false;
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
        if (c == char32_t(quote) || c == '\\') {
            out += '\\';
            out += char(c);
        } else if (c == '\n') out += "\\n";
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

namespace {

// Appends to a temporary text that is not charged yet: checks that it would still fit.
void appendChecked(std::string& out, std::string_view piece) {
    workBytes(piece.size());
    ensureBytes(out.size() + piece.size());
    out += piece;
}

// Python repr; `active` holds the containers being printed, so that a namespace holding
// itself prints as <Namespace {...}> like Python's recursion guard.
void reprInto(std::string& out, const Value& v, std::vector<const void*>& active) {
    using Kind = Value::Kind;
    const void* self = v.isList() ? (const void*)&v.asList()
        : v.isDict()              ? (const void*)&v.asDict()
        : v.isNamespace()         ? (const void*)&v.asNamespace()
                                  : nullptr;
    if (self && std::find(active.begin(), active.end(), self) != active.end()) {
        appendChecked(out,
                      v.isList()       ? (v.asList().tuple ? "(...)" : "[...]")
                          : v.isDict() ? "{...}"
                                       : "<Namespace {...}>");
        return;
    }
    Budget::Depth depth;
    auto items = [&](const DictData& d) {
        bool first = true;
        for (const auto& [k, x] : d.items) {
            if (!first) appendChecked(out, ", ");
            first = false;
            reprInto(out, k, active);
            appendChecked(out, ": ");
            reprInto(out, x, active);
        }
    };
    switch (v.kind()) {
    case Kind::String: appendChecked(out, reprString(v.asString())); return;
    case Kind::List: {
        const auto& l = v.asList();
        active.push_back(self);
        appendChecked(out, l.tuple ? "(" : "[");
        for (size_t i = 0; i < l.items.size(); ++i) {
            if (i) appendChecked(out, ", ");
            reprInto(out, l.items[i], active);
        }
        if (l.tuple && l.items.size() == 1) appendChecked(out, ",");
        appendChecked(out, l.tuple ? ")" : "]");
        active.pop_back();
        return;
    }
    case Kind::Dict:
        active.push_back(self);
        appendChecked(out, "{");
        items(v.asDict());
        appendChecked(out, "}");
        active.pop_back();
        return;
    case Kind::Namespace:
        active.push_back(self);
        appendChecked(out, "<Namespace {");
        items(v.asNamespace().attributes);
        appendChecked(out, "}>");
        active.pop_back();
        return;
    case Kind::Function: appendChecked(out, "<function " + v.asFunction()->name + ">"); return;
    default: appendChecked(out, v.repr()); return;
    }
}

}  // namespace

std::string Value::repr() const {
    switch (kind()) {
    case Kind::Undefined: return "Undefined";
    case Kind::None: return "None";
    case Kind::Bool: return asBool() ? "True" : "False";
    case Kind::Int: return std::to_string(asInt());
    case Kind::Float: return formatFloat(asDouble());
    default: {
        std::string out;
        std::vector<const void*> active;
        reprInto(out, *this, active);
        return out;
    }
    }
}

std::string shortRepr(const Value& v, size_t max) {
    std::string r;
    if (v.isString()) {
        // Never print a whole huge string in a message.
        std::string head = unicode::encode(
            std::u32string_view(unicode::decode(std::string_view(v.asString()).substr(0, max * 4))).substr(0, max + 1));
        r = reprString(head);
    } else if (v.holdsContainer()) {
        r = "<" + v.typeName() + ">";
    } else {
        r = v.repr();
    }
    if (unicode::length(r) <= max) return r;
    return unicode::encode(std::u32string_view(unicode::decode(r)).substr(0, max)) + "...";
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
    work(1);
    if (isNumber() && o.isNumber()) {
        if (isFloat() || o.isFloat()) return asDouble() == o.asDouble();
        return asInt() == o.asInt();
    }
    if (kind() != o.kind()) return false;
    switch (kind()) {
    case Kind::Undefined:
    case Kind::None: return true;
    case Kind::String: workBytes(asString().size()); return asString() == o.asString();
    case Kind::List: {
        if (&asList() == &o.asList()) return true;
        Budget::Depth depth;
        const auto &a = asList().items, &b = o.asList().items;
        if (asList().tuple != o.asList().tuple || a.size() != b.size()) return false;
        for (size_t i = 0; i < a.size(); ++i)
            if (!a[i].equals(b[i])) return false;
        return true;
    }
    case Kind::Dict: {
        if (&asDict() == &o.asDict()) return true;
        Budget::Depth depth;
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
    case Kind::Undefined:
    case Kind::None: return true;
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
    work(1);
    if (a.isNumber() && b.isNumber()) {
        if (a.isFloat() || b.isFloat()) {
            double x = a.asDouble(), y = b.asDouble();
            return x < y ? -1 : (x > y ? 1 : 0);
        }
        int64_t x = a.asInt(), y = b.asInt();
        return x < y ? -1 : (x > y ? 1 : 0);
    }
    if (a.isString() && b.isString()) {
        workBytes(std::min(a.asString().size(), b.asString().size()));
        int c = a.asString().compare(b.asString());  // UTF-8 byte order = code point order
        return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    if (a.isList() && b.isList() && a.asList().tuple == b.asList().tuple) {
        Budget::Depth depth;
        const auto &x = a.asList().items, &y = b.asList().items;
        for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
            if (x[i].equals(y[i])) continue;
            return compareValues(x[i], y[i]);
        }
        return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
    }
    throw TemplateError("chat template",
                        "'<' not supported between instances of '" + a.typeName() + "' and '" + b.typeName() + "'");
}

Value Value::fromJson(const nlohmann::ordered_json& j, uint32_t maxDepth) {
    if ((j.is_array() || j.is_object()) && maxDepth == 0)
        throw Error("chat template", "a variable is nested too deeply");
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
        for (const auto& e : j) items.push_back(fromJson(e, maxDepth - 1));
        return list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
        Value d = dict();
        for (const auto& [k, v] : j.items()) d.mutableDict().append(Value(k), fromJson(v, maxDepth - 1));
        return d;
    }
    default: return none();
    }
}

namespace {

void dumpString(std::string& out, const std::string& s, bool ensureAscii) {
    workBytes(s.size());
    ensureBytes(out.size() + s.size() + 2);
    out += '"';
    size_t n = 0;
    for (char32_t c : unicode::decode(s)) {
        if (++n % 4096 == 0) ensureBytes(out.size());  // escapes grow the text up to 6x
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
                std::snprintf(b, sizeof b, "\\u%04x\\u%04x", unsigned(0xD800 + (v >> 10)),
                              unsigned(0xDC00 + (v & 0x3FF)));
            } else {
                std::snprintf(b, sizeof b, "\\u%04x", unsigned(c));
            }
            out += b;
        } else {
            unicode::append(out, c);
        }
    }
    out += '"';
    ensureBytes(out.size());
}

std::string jsonKey(const Value& k) {
    switch (k.kind()) {
    case Value::Kind::String: return k.asString();
    case Value::Kind::None: return "null";
    case Value::Kind::Bool: return k.asBool() ? "true" : "false";
    case Value::Kind::Int: return std::to_string(k.asInt());
    case Value::Kind::Float: return formatFloat(k.asDouble());
    default: throw TemplateError("chat template", "keys must be str, int, float, bool or None, not " + k.typeName());
    }
}

void dumpValue(std::string& out, const Value& v, const JsonDumpOptions& o, int depth) {
    bool pretty = o.indent >= 0 || !o.indentString.empty();
    const std::string spaces =
        o.indentString.empty() && o.indent > 0 ? std::string(size_t(o.indent), ' ') : std::string();
    const std::string& unit = o.indentString.empty() ? spaces : o.indentString;
    auto newline = [&](int level) {
        // Charged before it grows: indentation multiplies with depth and item count.
        appendChecked(out, "\n");
        workBytes(unit.size() * size_t(level));
        ensureBytes(out.size() + unit.size() * size_t(level));
        for (int i = 0; i < level; ++i) out += unit;
    };
    Budget::Depth guard;
    switch (v.kind()) {
    case Value::Kind::None: appendChecked(out, "null"); return;
    case Value::Kind::Bool: appendChecked(out, v.asBool() ? "true" : "false"); return;
    case Value::Kind::Int: appendChecked(out, std::to_string(v.asInt())); return;
    case Value::Kind::Float: {
        double d = v.asDouble();
        if (std::isnan(d)) appendChecked(out, "NaN");
        else if (std::isinf(d)) appendChecked(out, d < 0 ? "-Infinity" : "Infinity");
        else appendChecked(out, formatFloat(d));
        return;
    }
    case Value::Kind::String: dumpString(out, v.asString(), o.ensureAscii); return;
    case Value::Kind::List: {
        const auto& items = v.asList().items;
        if (items.empty()) {
            appendChecked(out, "[]");
            return;
        }
        out += '[';
        for (size_t i = 0; i < items.size(); ++i) {
            if (i) appendChecked(out, o.itemSeparator);
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
        if (entries.empty()) {
            appendChecked(out, "{}");
            return;
        }
        if (o.sortKeys) {
            workComparisons(entries.size() * 20);
            std::stable_sort(entries.begin(), entries.end(), [](auto& a, auto& b) { return a.first < b.first; });
        }
        out += '{';
        for (size_t i = 0; i < entries.size(); ++i) {
            if (i) appendChecked(out, o.itemSeparator);
            if (pretty) newline(depth + 1);
            dumpString(out, entries[i].first, o.ensureAscii);
            appendChecked(out, o.keySeparator);
            dumpValue(out, *entries[i].second, o, depth + 1);
        }
        if (pretty) newline(depth);
        out += '}';
        return;
    }
    default: throw TemplateError("chat template", "Object of type " + v.typeName() + " is not JSON serializable");
    }
}

}  // namespace

std::string dumpJson(const Value& v, const JsonDumpOptions& options) {
    std::string out;
    dumpValue(out, v, options, 0);
    return out;
}

}  // namespace cairn::chat
