// Jinja's built-in filters (and Hugging Face's tojson), with jinja2 3.1 semantics.
#include "builtins.h"

#include "unicode.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace cairn::chat {
namespace {

using FilterFn = Value (*)(const Value&, const CallArgs&);

std::vector<Value> splitPath(const std::string& attribute) {
    std::vector<Value> parts;
    size_t start = 0;
    for (;;) {
        size_t dot = attribute.find('.', start);
        std::string part = attribute.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        bool digits = !part.empty() && std::all_of(part.begin(), part.end(), ::isdigit);
        parts.push_back(digits ? Value(int64_t(std::strtoll(part.c_str(), nullptr, 10))) : Value(part));
        if (dot == std::string::npos) break;
        start = dot + 1;
    }
    return parts;
}

// Jinja's make_attrgetter: "a.b.0" looked up item-first at each step.
Value lookupPath(const Value& item, const Value& attribute) {
    if (attribute.isInt()) return getItem(item, attribute);
    if (!attribute.isString()) return getItem(item, attribute);
    Value v = item;
    for (const auto& part : splitPath(attribute.asString())) v = getItem(v, part);
    return v;
}

Value sortKey(const Value& v, bool caseSensitive) {
    if (!caseSensitive && v.isString()) return Value(unicode::lower(v.asString()));
    return v;
}

std::vector<Value> sorted(std::vector<Value> items, bool reverse, std::function<Value(const Value&)> key) {
    std::vector<std::pair<Value, Value>> keyed;
    keyed.reserve(items.size());
    for (auto& v : items) keyed.emplace_back(key(v), v);
    workComparisons(keyed.size() * 20);
    // jinja2's sort keys are lists, compared item by item with == first: equal keys (two
    // Undefined for a missing attribute) keep their order instead of raising.
    std::stable_sort(keyed.begin(), keyed.end(), [reverse](const auto& a, const auto& b) {
        if (a.first.equals(b.first)) return false;
        return reverse ? compareValues(b.first, a.first) < 0 : compareValues(a.first, b.first) < 0;
    });
    std::vector<Value> out;
    for (auto& kv : keyed) out.push_back(std::move(kv.second));
    return out;
}

// jinja2's max (sign 1) and min (sign -1): the first item whose key is
// greatest (least); Undefined for an empty sequence.
Value extremum(const char* name, const Value& v, const CallArgs& a, int sign) {
    Params p(name, a, {"case_sensitive", "attribute"});
    auto items = iterate(v);
    if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
    bool cs = p[0].truthy();
    auto key = [&](const Value& x) { return sortKey(p.has(1) ? lookupPath(x, p[1]) : x, cs); };
    Value best = items[0];
    for (size_t i = 1; i < items.size(); ++i)
        if (compareValues(key(items[i]), key(best)) * sign > 0) best = items[i];
    return best;
}

CallArgs restArgs(const CallArgs& args, size_t from) {
    CallArgs rest;
    for (size_t i = from; i < args.positional.size(); ++i) rest.positional.push_back(args.positional[i]);
    rest.named = args.named;
    return rest;
}

Value selectOrReject(const Value& input, const CallArgs& args, bool byAttribute, bool select) {
    std::vector<Value> out;
    if (!input.truthy()) return Value::list();  // jinja2: `if value:` (none, undefined, 0 and "" give nothing)
    size_t testIndex = byAttribute ? 1 : 0;
    if (byAttribute && args.positional.empty()) raiseError("selectattr/rejectattr need an attribute");
    for (const auto& item : iterate(input)) {
        Value v = byAttribute ? lookupPath(item, args.positional[0]) : item;
        bool ok;
        if (args.positional.size() > testIndex) {
            const Value& test = args.positional[testIndex];
            if (!test.isString()) raiseError("test name must be a string");
            CallArgs testArgs = restArgs(args, testIndex + 1);
            ok = applyTest(test.asString(), v, testArgs);
        } else {
            ok = v.truthy();
        }
        if (ok == select) out.push_back(item);
    }
    return Value::list(std::move(out));
}

std::string jinjaTitle(const std::string& s) {
    // Words start after runs of [-\s({\[<]; each word: first char upper, rest lower.
    auto cps = unicode::decode(s);
    std::string out;
    bool wordStart = true;
    for (char32_t c : cps) {
        bool sep = c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || unicode::isSpace(c);
        if (sep) {
            unicode::append(out, c);
            wordStart = true;
            continue;
        }
        unicode::append(out, wordStart ? unicode::toUpper(c) : unicode::toLower(c));
        wordStart = false;
    }
    return out;
}

std::string indentText(std::string s, const Value& widthV, bool first, bool blank) {
    int64_t width = widthV.isString() ? 0 : std::max<int64_t>(0, widthV.isUndefined() ? 4 : widthV.asInt());
    ensureBytes(uint64_t(width));
    std::string indention = widthV.isString() ? widthV.asString() : std::string(size_t(width), ' ');
    s += "\n";  // jinja2's quirk so that splitlines keeps a final empty line
    CallArgs none;
    std::vector<std::string> lines;
    Value split = callMethod(Value(s), "splitlines", none);
    for (const auto& v : split.asList().items) lines.push_back(v.asString());
    // Every line gains the indention: charge the result before building it.
    uint64_t total = s.size() + indention.size();
    for (size_t i = 0; i < lines.size(); ++i) total += indention.size() + 1;
    ensureBytes(total);
    workBytes(total);
    std::string rv;
    if (blank) {
        for (size_t i = 0; i < lines.size(); ++i) rv += (i ? "\n" + indention : "") + lines[i];
    } else {
        rv = lines.empty() ? "" : lines[0];
        for (size_t i = 1; i < lines.size(); ++i) rv += "\n" + (lines[i].empty() ? "" : indention + lines[i]);
    }
    if (first) rv = indention + rv;
    return rv;
}

Value pyRound(const Value& v, int64_t precision, const std::string& method) {
    if (!v.isNumber()) raiseError("type " + v.typeName() + " doesn't define __round__ method");
    if (method == "common") {
        if (!v.isFloat()) return Value(v.asInt());
        double d = v.asDouble();
        if (!std::isfinite(d)) return v;
        char buf[400];
        std::snprintf(buf, sizeof buf, "%.*f", int(std::clamp<int64_t>(precision, 0, 300)), d);
        return Value(std::strtod(buf, nullptr));
    }
    double scale = std::pow(10.0, double(precision));
    double x = v.asDouble() * scale;
    if (method == "ceil") return Value(std::ceil(x) / scale);
    if (method == "floor") return Value(std::floor(x) / scale);
    raiseError("method must be common, ceil or floor");
}

bool parseInt(std::string s, int64_t base, int64_t& out) {
    if (base != 0 && (base < 2 || base > 36)) raiseError("int() base must be >= 2 and <= 36, or 0");
    s = pyStrip(s, Value::none(), true, true);
    s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
    if (s.empty()) return false;
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(s.c_str(), &end, int(base));
    if (*end != '\0' || errno == ERANGE) return false;
    out = v;
    return true;
}

bool parseFloat(const std::string& text, double& out) {
    std::string s = pyStrip(text, Value::none(), true, true);
    if (s.empty()) return false;
    char* end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (*end != '\0') return false;
    out = v;
    return true;
}

const BuiltinTable<FilterFn>& filters() {
    static const BuiltinTable<FilterFn> table = {
        {
            {"abs",
             [](const Value& v, const CallArgs&) -> Value {
                 if (v.isFloat()) return Value(std::fabs(v.asDouble()));
                 if (v.isNumber()) {
                     if (v.asInt() == INT64_MIN) raiseError("integer overflow");
                     return Value(int64_t(std::llabs(v.asInt())));
                 }
                 raiseError("bad operand type for abs(): '" + v.typeName() + "'");
             }},
            {"attr",
             [](const Value& v, const CallArgs& a) {
                 Params p("attr", a, {"name"});
                 // An attribute only: a dict's items are not attributes (jinja2 checks getattr_static).
                 if (v.isDict() && !isMethod(v, p[0].str()))
                     return Value::undefined("'dict object' has no attribute '" + p[0].str() + "'");
                 return getAttribute(v, p[0].str());
             }},
            {"batch",
             [](const Value& v, const CallArgs& a) {
                 Params p("batch", a, {"linecount", "fill_with"});
                 int64_t n = p[0].asInt();  // <= 0: one batch with everything, as jinja2's loop gives
                 std::vector<Value> out, cur;
                 for (auto& item : iterate(v)) {
                     if (int64_t(cur.size()) == n) {
                         out.push_back(Value::list(cur));
                         cur.clear();
                     }
                     cur.push_back(item);
                 }
                 if (!cur.empty()) {
                     if (p.has(1) && !p[1].isNone() && int64_t(cur.size()) < n) {
                         // The fill multiplies: charge it before it is made.
                         uint64_t fill = uint64_t(n) - cur.size();
                         ensureBytes(uint64_t(n) > UINT64_MAX / sizeof(Value) ? UINT64_MAX
                                                                              : uint64_t(n) * sizeof(Value));
                         work(fill);
                         cur.resize(size_t(n), p[1]);
                     }
                     out.push_back(Value::list(cur));
                 }
                 return Value::list(out);
             }},
            {"capitalize", [](const Value& v, const CallArgs&) { return Value(unicode::capitalize(v.str())); }},
            {"center",
             [](const Value& v, const CallArgs& a) {
                 Params p("center", a, {"width"});
                 CallArgs m;
                 m.positional.push_back(Value(p.has(0) ? p[0].asInt() : int64_t(80)));
                 return callMethod(Value(v.str()), "center", m);
             }},
            {"default",
             [](const Value& v, const CallArgs& a) {
                 Params p("default", a, {"default_value", "boolean"});
                 if (v.isUndefined() || (p[1].truthy() && !v.truthy())) return p.has(0) ? p[0] : Value("");
                 return v;
             }},
            {"dictsort",
             [](const Value& v, const CallArgs& a) {
                 Params p("dictsort", a, {"case_sensitive", "by", "reverse"});
                 bool bySecond = p[1].isString() && p[1].asString() == "value";
                 if (p.has(1) && !bySecond && !(p[1].isString() && p[1].asString() == "key"))
                     raiseError("You can only sort by either \"key\" or \"value\"");
                 if (v.isUndefined()) raiseUndefined(v);
                 if (!v.isDict()) raiseError("'" + v.typeName() + "' object has no attribute 'items'");
                 bool cs = p[0].truthy();
                 std::vector<Value> pairs;
                 for (const auto& [k, val] : v.asDict().items) pairs.push_back(Value::list({k, val}, true));
                 return Value::list(sorted(pairs, p[2].truthy(), [&](const Value& kv) {
                     return sortKey(kv.asList().items[bySecond ? 1 : 0], cs);
                 }));
             }},
            {"escape",
             [](const Value& v, const CallArgs&) {
                 std::string out;
                 for (char c : v.str()) {
                     switch (c) {
                     case '&': out += "&amp;"; break;
                     case '<': out += "&lt;"; break;
                     case '>': out += "&gt;"; break;
                     case '"': out += "&#34;"; break;
                     case '\'': out += "&#39;"; break;
                     default: out += c;
                     }
                 }
                 return Value(out);
             }},
            {"first",
             [](const Value& v, const CallArgs&) {
                 auto items = iterate(v);
                 return items.empty() ? Value::undefined("No first item, sequence was empty.") : items.front();
             }},
            {"float",
             [](const Value& v, const CallArgs& a) {
                 Params p("float", a, {"default"});
                 if (v.isUndefined()) raiseUndefined(v);  // float(Undefined) raises in jinja2
                 Value fallback = p.has(0) ? p[0] : Value(0.0);
                 if (v.isNumber()) return Value(v.asDouble());
                 double d;
                 if (v.isString() && parseFloat(v.asString(), d)) return Value(d);
                 return fallback;
             }},
            {"format",
             [](const Value& v, const CallArgs& a) {
                 if (!a.named.empty() && !a.positional.empty())
                     raiseError("can't handle positional and keyword arguments at the same time");
                 if (!a.named.empty()) {
                     Value d = Value::dict();
                     for (const auto& [k, val] : a.named) d.mutableDict().set(Value(k), val);
                     return binaryOp("%", Value(v.str()), d);
                 }
                 return binaryOp("%", Value(v.str()), Value::list(a.positional, true));
             }},
            {"indent",
             [](const Value& v, const CallArgs& a) {
                 Params p("indent", a, {"width", "first", "blank"});
                 if (v.isUndefined()) raiseUndefined(v);
                 if (!v.isString()) raiseError("unsupported operand type(s) for +=: '" + v.typeName() + "' and 'str'");
                 return Value(indentText(v.str(), p[0], p[1].truthy(), p[2].truthy()));
             }},
            {"int",
             [](const Value& v, const CallArgs& a) {
                 Params p("int", a, {"default", "base"});
                 if (v.isUndefined()) raiseUndefined(v);  // int(Undefined) raises in jinja2
                 Value fallback = p.has(0) ? p[0] : Value(int64_t(0));
                 if (v.isFloat()) {
                     double d = v.asDouble();
                     if (!std::isfinite(d) || std::fabs(d) > 9.2e18) return fallback;
                     return Value(int64_t(d));
                 }
                 if (v.isNumber()) return Value(v.asInt());
                 if (v.isString()) {
                     int64_t i;
                     if (parseInt(v.asString(), p.has(1) ? p[1].asInt() : 10, i)) return Value(i);
                     double d;
                     if (parseFloat(v.asString(), d) && std::isfinite(d) && std::fabs(d) < 9.2e18)
                         return Value(int64_t(d));
                 }
                 return fallback;
             }},
            {"items",
             [](const Value& v, const CallArgs&) {
                 if (v.isUndefined()) return Value::list();
                 if (!v.isDict()) raiseError("Can only get item pairs from a mapping.");
                 CallArgs none;
                 return callMethod(v, "items", none);
             }},
            {"join",
             [](const Value& v, const CallArgs& a) {
                 Params p("join", a, {"d", "attribute"});
                 std::string sep = p.has(0) ? p[0].str() : "";
                 bool byAttribute = p.has(1) && !p[1].isNone();
                 std::vector<std::string> parts;
                 uint64_t total = 0;
                 for (const auto& item : iterate(v)) {
                     // Charged before the joined text exists: the separator repeats once per item.
                     parts.push_back((byAttribute ? lookupPath(item, p[1]) : item).str());
                     total += parts.back().size() + (parts.size() > 1 ? sep.size() : 0);
                     ensureBytes(2 * total);
                 }
                 workBytes(total);
                 std::string out;
                 out.reserve(total);
                 for (size_t i = 0; i < parts.size(); ++i) {
                     if (i) out += sep;
                     out += parts[i];
                 }
                 return Value(std::move(out));
             }},
            {"last",
             [](const Value& v, const CallArgs&) {
                 auto items = iterate(v);
                 return items.empty() ? Value::undefined("No last item, sequence was empty.") : items.back();
             }},
            {"length", [](const Value& v, const CallArgs&) { return Value(int64_t(length(v))); }},
            {"list", [](const Value& v, const CallArgs&) { return Value::list(iterate(v)); }},
            {"lower", [](const Value& v, const CallArgs&) { return Value(unicode::lower(v.str())); }},
            {"map",
             [](const Value& v, const CallArgs& a) {
                 std::vector<Value> out;
                 if (!v.truthy()) return Value::list();  // jinja2: `if value:`
                 if (a.positional.empty()) {
                     Value attribute, fallback;
                     for (const auto& [k, val] : a.named) {
                         if (k == "attribute") attribute = val;
                         else if (k == "default") fallback = val;
                         else raiseError("map() got an unexpected keyword argument '" + k + "'");
                     }
                     if (attribute.isUndefined()) raiseError("map requires a filter argument");
                     bool hasFallback = !fallback.isUndefined() && !fallback.isNone();
                     for (const auto& item : iterate(v)) {
                         Value x = lookupPath(item, attribute);
                         out.push_back(x.isUndefined() && hasFallback ? fallback : x);
                     }
                     return Value::list(out);
                 }
                 if (!a.positional[0].isString()) raiseError("map: filter name must be a string");
                 std::string name = a.positional[0].asString();
                 CallArgs rest = restArgs(a, 1);
                 for (const auto& item : iterate(v)) out.push_back(applyFilter(name, item, rest));
                 return Value::list(out);
             }},
            {"max", [](const Value& v, const CallArgs& a) { return extremum("max", v, a, 1); }},
            {"min", [](const Value& v, const CallArgs& a) { return extremum("min", v, a, -1); }},
            {"pprint", [](const Value& v, const CallArgs&) { return Value(v.repr()); }},
            {"reject", [](const Value& v, const CallArgs& a) { return selectOrReject(v, a, false, false); }},
            {"rejectattr", [](const Value& v, const CallArgs& a) { return selectOrReject(v, a, true, false); }},
            {"replace",
             [](const Value& v, const CallArgs& a) {
                 Params p("replace", a, {"old", "new", "count"});
                 if (!p.has(0) || !p.has(1)) raiseError("replace() missing required arguments 'old' and 'new'");
                 return Value(
                     pyReplace(v.str(), p[0].str(), p[1].str(), p.has(2) && !p[2].isNone() ? p[2].asInt() : -1));
             }},
            {"reverse",
             [](const Value& v, const CallArgs&) {
                 if (v.isString()) {
                     auto cps = unicode::decode(v.asString());
                     std::reverse(cps.begin(), cps.end());
                     return Value(unicode::encode(cps));
                 }
                 auto items = iterate(v);
                 std::reverse(items.begin(), items.end());
                 return Value::list(items);
             }},
            {"round",
             [](const Value& v, const CallArgs& a) {
                 Params p("round", a, {"precision", "method"});
                 Value r = pyRound(v, p.has(0) ? p[0].asInt() : 0, p.has(1) ? p[1].str() : "common");
                 return r.isInt() ? r : Value(r.asDouble());
             }},
            {"safe", [](const Value& v, const CallArgs&) { return Value(v.str()); }},
            {"select", [](const Value& v, const CallArgs& a) { return selectOrReject(v, a, false, true); }},
            {"selectattr", [](const Value& v, const CallArgs& a) { return selectOrReject(v, a, true, true); }},
            {"slice",
             [](const Value& v, const CallArgs& a) {
                 Params p("slice", a, {"slices", "fill_with"});
                 auto items = iterate(v);
                 int64_t slices = p[0].asInt();
                 if (slices == 0) raiseError("integer division or modulo by zero");
                 if (slices < 0) return Value::list();  // range(slices) is empty
                 // Each slice is a list even when empty: the count is charged before they are made.
                 ensureBytes(uint64_t(slices) > UINT64_MAX / (2 * kObjectBytes) ? UINT64_MAX
                                                                                : uint64_t(slices) * 2 * kObjectBytes);
                 work(uint64_t(slices));
                 uint64_t n = items.size(), per = n / uint64_t(slices), extra = n % uint64_t(slices), offset = 0;
                 bool fill = p.has(1) && !p[1].isNone();
                 std::vector<Value> out;
                 out.reserve(size_t(slices));
                 for (uint64_t i = 0; i < uint64_t(slices); ++i) {
                     uint64_t start = offset + i * per;  // <= n: no overflow
                     if (i < extra) ++offset;
                     uint64_t end = std::min<uint64_t>(n, offset + (i + 1) * per);
                     std::vector<Value> part(items.begin() + long(start), items.begin() + long(std::max(start, end)));
                     if (fill && i >= extra) part.push_back(p[1]);  // jinja2 fills every slice when none has extra
                     out.push_back(Value::list(std::move(part)));
                 }
                 return Value::list(std::move(out));
             }},
            {"sort",
             [](const Value& v, const CallArgs& a) {
                 Params p("sort", a, {"reverse", "case_sensitive", "attribute"});
                 bool cs = p[1].truthy();
                 return Value::list(sorted(iterate(v), p[0].truthy(), [&](const Value& x) {
                     return sortKey(p.has(2) ? lookupPath(x, p[2]) : x, cs);
                 }));
             }},
            {"string", [](const Value& v, const CallArgs&) { return Value(v.str()); }},
            {"sum",
             [](const Value& v, const CallArgs& a) {
                 Params p("sum", a, {"attribute", "start"});
                 Value total = p.has(1) ? p[1] : Value(int64_t(0));
                 for (const auto& item : iterate(v))
                     total = binaryOp("+", total, p.has(0) ? lookupPath(item, p[0]) : item);
                 return total;
             }},
            {"title", [](const Value& v, const CallArgs&) { return Value(jinjaTitle(v.str())); }},
            {"tojson",
             [](const Value& v, const CallArgs& a) {
                 Params p("tojson", a, {"ensure_ascii", "indent", "separators", "sort_keys"});
                 JsonDumpOptions o;
                 o.ensureAscii = p[0].truthy();
                 if (p[1].isString()) o.indentString = p[1].asString(), o.indent = 0;
                 else if (p[1].isNumber()) {
                     int64_t indent = std::max<int64_t>(0, p[1].asInt());
                     ensureBytes(uint64_t(indent));  // one indentation unit is made up front
                     o.indent = int(std::min<int64_t>(indent, INT32_MAX));
                 }
                 if (o.indent >= 0) o.itemSeparator = ",";
                 if (p[2].isList() && p[2].asList().items.size() == 2) {
                     o.itemSeparator = p[2].asList().items[0].str();
                     o.keySeparator = p[2].asList().items[1].str();
                 }
                 o.sortKeys = p[3].truthy();
                 return Value(dumpJson(v, o));
             }},
            {"trim",
             [](const Value& v, const CallArgs& a) {
                 Params p("trim", a, {"chars"});
                 return Value(pyStrip(v.str(), p[0], true, true));
             }},
            {"truncate",
             [](const Value& v, const CallArgs& a) {
                 Params p("truncate", a, {"length", "killwords", "end", "leeway"});
                 if (v.isList() || v.isDict()) {
                     // len() works; a short one is returned as it is, a long one cannot take `end`.
                     int64_t n = int64_t(length(v)), len = p.has(0) ? p[0].asInt() : 255;
                     int64_t leeway = p.has(3) && !p[3].isNone() ? p[3].asInt() : 5, limit;
                     if (__builtin_add_overflow(len, leeway, &limit)) limit = INT64_MAX;
                     if (n <= limit) return v;
                     raiseError("can only concatenate " + v.typeName() + " (not \"str\") to " + v.typeName());
                 }
                 if (!v.isString() && !v.isUndefined())
                     raiseError("object of type '" + v.typeName() + "' has no len()");
                 std::string s = v.str();
                 int64_t len = p.has(0) ? p[0].asInt() : 255, leeway = p.has(3) && !p[3].isNone() ? p[3].asInt() : 5;
                 std::string end = p.has(2) ? p[2].str() : "...";
                 if (len < int64_t(unicode::length(end)))
                     raiseError("expected length >= " + std::to_string(unicode::length(end)) + ", got " +
                                std::to_string(len));
                 if (leeway < 0) raiseError("expected leeway >= 0, got " + std::to_string(leeway));
                 workBytes(s.size());
                 auto cps = unicode::decode(s);
                 int64_t limit;
                 if (__builtin_add_overflow(len, leeway, &limit)) limit = INT64_MAX;
                 if (int64_t(cps.size()) <= limit) return Value(s);
                 int64_t keep = std::max<int64_t>(0, len - int64_t(unicode::length(end)));
                 std::u32string head = cps.substr(0, size_t(keep));
                 if (!p[1].truthy()) {
                     size_t sp = head.rfind(U' ');
                     if (sp != std::u32string::npos) head.resize(sp);
                 }
                 return Value(unicode::encode(head) + end);
             }},
            {"unique",
             [](const Value& v, const CallArgs& a) {
                 Params p("unique", a, {"case_sensitive", "attribute"});
                 std::vector<Value> out, seen;
                 bool byAttribute = p.has(1) && !p[1].isNone();
                 for (const auto& item : iterate(v)) {
                     Value key = sortKey(byAttribute ? lookupPath(item, p[1]) : item, p[0].truthy());
                     workComparisons(seen.size());  // quadratic: the step budget bounds it
                     bool dup = false;
                     for (const auto& s : seen)
                         if (s.equals(key)) {
                             dup = true;
                             break;
                         }
                     if (dup) continue;
                     seen.push_back(key);
                     out.push_back(item);
                 }
                 return Value::list(out);
             }},
            {"upper", [](const Value& v, const CallArgs&) { return Value(unicode::upper(v.str())); }},
            {"wordcount",
             [](const Value& v, const CallArgs&) {
                 int64_t n = 0;
                 bool inWord = false;
                 for (char32_t c : unicode::decode(v.str())) {
                     bool w = unicode::isAlpha(c) || unicode::isDigit(c) || c == '_';
                     if (w && !inWord) ++n;
                     inWord = w;
                 }
                 return Value(n);
             }},
        },
        {{"d", "default"}, {"count", "length"}, {"e", "escape"}, {"forceescape", "escape"}}};
    return table;
}

}  // namespace

bool hasFilter(const std::string& name) { return filters().find(name) != nullptr; }

Value applyFilter(const std::string& name, const Value& input, CallArgs& args) {
    return filters().get(name, "filter")(input, args);
}

}  // namespace cairn::chat
