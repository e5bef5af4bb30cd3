// Methods of str, dict and list values, as Python has them. The immutable
// sandbox refuses the mutating list/dict methods.
#include "builtins.h"

#include "unicode.h"

#include <algorithm>
#include <cstdint>
#include <set>

namespace cairn::chat {
namespace {

std::u32string charsArg(const Value& chars) {
    if (chars.isString()) return unicode::decode(chars.asString());
    return {};
}

std::string stringArg(const Params& p, size_t i, const char* what) {
    if (!p.has(i) || !p[i].isString())
        raiseError(p.function() + "() argument " + what + " must be str, not " + p[i].typeName());
    return p[i].asString();
}

// Python find() in code points: the byte offset converted.
int64_t codePointIndex(const std::string& s, size_t byteOffset) {
    return int64_t(unicode::length(std::string_view(s).substr(0, byteOffset)));
}

bool matchesAffix(const std::string& s, const Value& affix, bool prefix, const char* fn) {
    auto test = [&](const Value& a) {
        if (!a.isString())
            raiseError(std::string(fn) + " first arg must be str or a tuple of str, not " + a.typeName());
        const std::string& x = a.asString();
        if (x.size() > s.size()) return false;
        return prefix ? s.compare(0, x.size(), x) == 0 : s.compare(s.size() - x.size(), x.size(), x) == 0;
    };
    if (affix.isList()) {
        for (const auto& a : affix.asList().items)
            if (test(a)) return true;
        return false;
    }
    return test(affix);
}

// Parts of a split become values: charged (a string value each) before they pile up.
void chargeParts(size_t parts) {
    if (parts % 1024 == 0) ensureBytes(parts * (sizeof(std::string) + sizeof(Value) + kObjectBytes));
}

std::vector<std::string> splitLines(const std::string& s, bool keepEnds) {
    auto cps = unicode::decode(s);
    std::vector<std::string> out;
    std::u32string cur;
    for (size_t i = 0; i < cps.size(); ++i) {
        chargeParts(out.size() + 1);
        char32_t c = cps[i];
        bool brk = c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D || c == 0x1E ||
            c == 0x85 || c == 0x2028 || c == 0x2029;
        if (!brk) {
            cur.push_back(c);
            continue;
        }
        if (keepEnds) cur.push_back(c);
        if (c == '\r' && i + 1 < cps.size() && cps[i + 1] == '\n') {
            ++i;
            if (keepEnds) cur.push_back('\n');
        }
        out.push_back(unicode::encode(cur));
        cur.clear();
    }
    if (!cur.empty()) out.push_back(unicode::encode(cur));
    return out;
}

std::string pyFormat(const std::string& fmt, const CallArgs& args) {
    std::string out;
    size_t autoIndex = 0;
    workBytes(fmt.size());
    for (size_t i = 0; i < fmt.size(); ++i) {
        if (i % 4096 == 0) ensureBytes(out.size() + 4096);
        char c = fmt[i];
        if (c == '{' && i + 1 < fmt.size() && fmt[i + 1] == '{') {
            out += '{';
            ++i;
            continue;
        }
        if (c == '}' && i + 1 < fmt.size() && fmt[i + 1] == '}') {
            out += '}';
            ++i;
            continue;
        }
        if (c != '{') {
            out += c;
            continue;
        }
        size_t close = fmt.find('}', i);
        if (close == std::string::npos) raiseError("Single '{' encountered in format string");
        std::string field = fmt.substr(i + 1, close - i - 1);
        std::string spec;
        if (auto colon = field.find(':'); colon != std::string::npos) {
            spec = field.substr(colon + 1);
            field.resize(colon);
        }
        Value v;
        if (field.empty()) {
            if (autoIndex >= args.positional.size())
                raiseError("Replacement index " + std::to_string(autoIndex) + " out of range");
            v = args.positional[autoIndex++];
        } else if (std::all_of(field.begin(), field.end(), ::isdigit)) {
            size_t idx = field.size() > 6 ? SIZE_MAX : std::stoul(field);
            if (idx >= args.positional.size()) raiseError("Replacement index " + field + " out of range");
            v = args.positional[idx];
        } else {
            bool found = false;
            for (const auto& [k, val] : args.named)
                if (k == field) {
                    v = val;
                    found = true;
                }
            if (!found) raiseError("KeyError: '" + field + "'");
        }
        std::string text = v.str();
        if (!spec.empty()) {
            // Width and alignment only: [fill][<>^]width
            char align = v.isNumber() ? '>' : '<', fill = ' ';
            size_t p = 0;
            if (spec.size() >= 2 && (spec[1] == '<' || spec[1] == '>' || spec[1] == '^')) {
                fill = spec[0];
                align = spec[1];
                p = 2;
            } else if (spec[0] == '<' || spec[0] == '>' || spec[0] == '^') {
                align = spec[0];
                p = 1;
            }
            uint64_t width = 0;
            while (p < spec.size() && ::isdigit(static_cast<unsigned char>(spec[p])))
                width = std::min<uint64_t>(width * 10 + uint64_t(spec[p++] - '0'), UINT64_MAX / 16);
            size_t len = unicode::length(text);
            if (width > len) {
                ensureBytes(out.size() + width);
                size_t pad = size_t(width - len);
                if (align == '<') text += std::string(pad, fill);
                else if (align == '>') text = std::string(pad, fill) + text;
                else text = std::string(pad / 2, fill) + text + std::string(pad - pad / 2, fill);
            }
        }
        ensureBytes(out.size() + text.size());
        out += text;
        i = close;
    }
    return out;
}

std::string pad(const std::string& s, int64_t width, const std::string& fillArg, char align) {
    size_t len = unicode::length(s);
    if (width <= int64_t(len)) return s;
    size_t total = size_t(width) - len;
    std::string fill = fillArg.empty() ? " " : fillArg;
    // The fill is charged before it is made (`'x'.center(10**12)`).
    ensureBytes(total > UINT64_MAX / 8 ? UINT64_MAX : s.size() + total * fill.size());
    workBytes(total * fill.size());
    auto rep = [&](size_t n) {
        std::string r;
        r.reserve(n * fill.size());
        for (size_t i = 0; i < n; ++i) r += fill;
        return r;
    };
    if (align == '<') return s + rep(total);
    if (align == '>') return rep(total) + s;
    size_t left = total / 2 + (total & size_t(width) & 1);
    return rep(left) + s + rep(total - left);
}

// str methods: each entry of the table below is one of these, named as Python has it.
Value strip(const std::string& s, const CallArgs& args, const char* name, bool left, bool right) {
    Params p(name, args, {"chars"});
    return Value(pyStrip(s, p[0], left, right));
}

Value split(const std::string& s, const CallArgs& args, const char* name, bool fromRight) {
    Params p(name, args, {"sep", "maxsplit"});
    int64_t maxSplit = p.has(1) ? p[1].asInt() : -1;
    std::vector<Value> out;
    if (fromRight && maxSplit >= 0) {
        // Split from the right: reverse, split, reverse back (valid for code-point sequences).
        auto rev = [](const std::string& x) {
            auto c = unicode::decode(x);
            std::reverse(c.begin(), c.end());
            return unicode::encode(c);
        };
        Value sep = p[0].isString() ? Value(rev(p[0].asString())) : p[0];
        auto parts = pySplit(rev(s), sep, maxSplit);
        for (auto it = parts.rbegin(); it != parts.rend(); ++it) out.emplace_back(rev(*it));
        return Value::list(std::move(out));
    }
    for (auto& part : pySplit(s, p[0], maxSplit)) out.emplace_back(std::move(part));
    return Value::list(std::move(out));
}

Value splitlines(const std::string& s, const CallArgs& args) {
    Params p("splitlines", args, {"keepends"});
    std::vector<Value> out;
    for (auto& line : splitLines(s, p[0].truthy())) out.emplace_back(std::move(line));
    return Value::list(std::move(out));
}

Value affix(const std::string& s, const CallArgs& args, const char* name, bool prefix) {
    Params p(name, args, {"prefix", "start"});
    std::string sub = s;
    if (p.has(1)) sub = getSlice(Value(s), p[1], Value::none(), Value::none()).asString();
    return Value(matchesAffix(sub, p[0], prefix, name));
}

Value replace(const std::string& s, const CallArgs& args) {
    Params p("replace", args, {"old", "new", "count"});
    return Value(pyReplace(s, stringArg(p, 0, "1"), stringArg(p, 1, "2"), p.has(2) ? p[2].asInt() : -1));
}

Value swapcase(const std::string& s) {
    std::string out;
    for (char32_t c : unicode::decode(s))
        unicode::append(out, unicode::isUpper(c) ? unicode::toLower(c) : unicode::toUpper(c));
    return Value(out);
}

// find, rfind, index, rindex: code-point positions; index and rindex raise when absent.
Value find(const std::string& s, const CallArgs& args, const char* name, bool fromRight, bool raise) {
    Params p(name, args, {"sub", "start", "end"});
    std::string sub = stringArg(p, 0, "1");
    auto cps = unicode::decode(s);
    int64_t n = int64_t(cps.size());
    auto norm = [&](const Value& v, int64_t dflt) {
        if (!v.isInt()) return dflt;
        int64_t x = v.asInt();
        if (x < 0) x += n;
        return std::clamp<int64_t>(x, 0, n);
    };
    int64_t start = norm(p[1], 0), end = norm(p[2], n);
    int64_t result = -1;
    if (start <= end) {
        std::string window = unicode::encode(std::u32string_view(cps).substr(size_t(start), size_t(end - start)));
        size_t pos = fromRight ? window.rfind(sub) : window.find(sub);
        if (pos != std::string::npos) result = start + codePointIndex(window, pos);
    }
    if (result < 0 && raise) raiseError("substring not found");
    return Value(result);
}

Value count(const std::string& s, const CallArgs& args) {
    Params p("count", args, {"sub"});
    std::string sub = stringArg(p, 0, "1");
    if (sub.empty()) return Value(int64_t(unicode::length(s) + 1));
    int64_t n = 0;
    for (size_t pos = s.find(sub); pos != std::string::npos; pos = s.find(sub, pos + sub.size())) ++n;
    return Value(n);
}

Value join(const std::string& s, const CallArgs& args) {
    Params p("join", args, {"iterable"});
    auto items = iterate(p[0]);
    uint64_t total = 0;
    for (size_t i = 0; i < items.size(); ++i) {
        if (!items[i].isString())
            raiseError("sequence item " + std::to_string(i) + ": expected str instance, " + items[i].typeName() +
                       " found");
        total += items[i].asString().size() + (i ? s.size() : 0);
    }
    ensureBytes(total);  // the separator repeats once per item
    workBytes(total);
    std::string out;
    out.reserve(total);
    for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += s;
        out += items[i].asString();
    }
    return Value(std::move(out));
}

// isdigit, isalpha, isalnum, isspace: non-empty and every code point of the class.
Value allOf(const std::string& s, bool (*inClass)(char32_t)) {
    auto cps = unicode::decode(s);
    return Value(!cps.empty() && std::all_of(cps.begin(), cps.end(), inClass));
}

// isupper, islower: at least one cased code point and none of the other case.
Value isCase(const std::string& s, bool upper) {
    bool anyCased = false;
    for (char32_t c : unicode::decode(s)) {
        if (upper ? unicode::isLower(c) : unicode::isUpper(c)) return Value(false);
        anyCased |= upper ? unicode::isUpper(c) : unicode::isLower(c);
    }
    return Value(anyCased);
}

Value justify(const std::string& s, const CallArgs& args, const char* name, char align) {
    Params p(name, args, {"width", "fillchar"});
    return Value(pad(s, p[0].asInt(), p[1].isString() ? p[1].asString() : " ", align));
}

Value zfill(const std::string& s, const CallArgs& args) {
    Params p("zfill", args, {"width"});
    std::string body = s, sign;
    if (!body.empty() && (body[0] == '-' || body[0] == '+')) {
        sign = body.substr(0, 1);
        body.erase(0, 1);
    }
    return Value(sign + pad(body, p[0].asInt() - int64_t(sign.size()), "0", '>'));
}

Value partition(const std::string& s, const CallArgs& args, const char* name, bool fromRight) {
    Params p(name, args, {"sep"});
    std::string sep = stringArg(p, 0, "1");
    if (sep.empty()) raiseError("empty separator");
    size_t pos = fromRight ? s.rfind(sep) : s.find(sep);
    if (pos == std::string::npos)
        return fromRight ? Value::list({Value(""), Value(""), Value(s)}, true)
                         : Value::list({Value(s), Value(""), Value("")}, true);
    return Value::list({Value(s.substr(0, pos)), Value(sep), Value(s.substr(pos + sep.size()))}, true);
}

Value removeAffix(const std::string& s, const CallArgs& args, const char* name, bool prefix) {
    Params p(name, args, {"affix"});
    std::string a = stringArg(p, 0, "1");
    if (prefix && s.compare(0, a.size(), a) == 0) return Value(s.substr(a.size()));
    if (!prefix && !a.empty() && s.size() >= a.size() && s.compare(s.size() - a.size(), a.size(), a) == 0)
        return Value(s.substr(0, s.size() - a.size()));
    return Value(s);
}

bool isAlnum(char32_t c) { return unicode::isAlpha(c) || unicode::isDigit(c); }

using StringMethod = Value (*)(const std::string&, const CallArgs&);

const BuiltinTable<StringMethod>& stringMethods() {
    using A = const CallArgs&;
    static const BuiltinTable<StringMethod> table = {
        {
            {"strip", [](const std::string& s, A a) { return strip(s, a, "strip", true, true); }},
            {"lstrip", [](const std::string& s, A a) { return strip(s, a, "lstrip", true, false); }},
            {"rstrip", [](const std::string& s, A a) { return strip(s, a, "rstrip", false, true); }},
            {"split", [](const std::string& s, A a) { return split(s, a, "split", false); }},
            {"rsplit", [](const std::string& s, A a) { return split(s, a, "rsplit", true); }},
            {"splitlines", splitlines},
            {"startswith", [](const std::string& s, A a) { return affix(s, a, "startswith", true); }},
            {"endswith", [](const std::string& s, A a) { return affix(s, a, "endswith", false); }},
            {"replace", replace},
            {"upper", [](const std::string& s, A) { return Value(unicode::upper(s)); }},
            {"lower", [](const std::string& s, A) { return Value(unicode::lower(s)); }},
            {"title", [](const std::string& s, A) { return Value(unicode::title(s)); }},
            {"capitalize", [](const std::string& s, A) { return Value(unicode::capitalize(s)); }},
            {"swapcase", [](const std::string& s, A) { return swapcase(s); }},
            {"find", [](const std::string& s, A a) { return find(s, a, "find", false, false); }},
            {"rfind", [](const std::string& s, A a) { return find(s, a, "rfind", true, false); }},
            {"index", [](const std::string& s, A a) { return find(s, a, "index", false, true); }},
            {"rindex", [](const std::string& s, A a) { return find(s, a, "rindex", true, true); }},
            {"count", count},
            {"join", join},
            {"format", [](const std::string& s, A a) { return Value(pyFormat(s, a)); }},
            {"isdigit", [](const std::string& s, A) { return allOf(s, unicode::isDigit); }},
            {"isalpha", [](const std::string& s, A) { return allOf(s, unicode::isAlpha); }},
            {"isalnum", [](const std::string& s, A) { return allOf(s, isAlnum); }},
            {"isspace", [](const std::string& s, A) { return allOf(s, unicode::isSpace); }},
            {"isupper", [](const std::string& s, A) { return isCase(s, true); }},
            {"islower", [](const std::string& s, A) { return isCase(s, false); }},
            {"center", [](const std::string& s, A a) { return justify(s, a, "center", '^'); }},
            {"ljust", [](const std::string& s, A a) { return justify(s, a, "ljust", '<'); }},
            {"rjust", [](const std::string& s, A a) { return justify(s, a, "rjust", '>'); }},
            {"zfill", zfill},
            {"partition", [](const std::string& s, A a) { return partition(s, a, "partition", false); }},
            {"rpartition", [](const std::string& s, A a) { return partition(s, a, "rpartition", true); }},
            {"removeprefix", [](const std::string& s, A a) { return removeAffix(s, a, "removeprefix", true); }},
            {"removesuffix", [](const std::string& s, A a) { return removeAffix(s, a, "removesuffix", false); }},
        },
        {{"casefold", "lower"}, {"isnumeric", "isdigit"}, {"isdecimal", "isdigit"}},
    };
    return table;
}

// dict and list methods. Each is charged the work of one pass over the container.
using DictMethod = Value (*)(const DictData&, const CallArgs&);
using ListMethod = Value (*)(const std::vector<Value>&, const CallArgs&);

// A dict method's result holds a value (two for items) per entry: charged before it is made.
void chargeEntries(const DictData& d, size_t bytesPerEntry) { ensureBytes(d.items.size() * bytesPerEntry); }

const BuiltinTable<DictMethod>& dictMethods() {
    static const BuiltinTable<DictMethod> table = {
        {
            {"items",
             [](const DictData& d, const CallArgs&) {
                 chargeEntries(d, sizeof(Value) + 2 * kObjectBytes);
                 std::vector<Value> out;
                 for (const auto& [k, v] : d.items) out.push_back(Value::list({k, v}, true));
                 return Value::list(std::move(out));
             }},
            {"keys",
             [](const DictData& d, const CallArgs&) {
                 chargeEntries(d, 2 * sizeof(Value));
                 std::vector<Value> out;
                 for (const auto& entry : d.items) out.push_back(entry.first);
                 return Value::list(std::move(out));
             }},
            {"values",
             [](const DictData& d, const CallArgs&) {
                 chargeEntries(d, 2 * sizeof(Value));
                 std::vector<Value> out;
                 for (const auto& entry : d.items) out.push_back(entry.second);
                 return Value::list(std::move(out));
             }},
            {"get",
             [](const DictData& d, const CallArgs& a) {
                 Params p("get", a, {"key", "default"});
                 if (const Value* v = d.find(p[0])) return *v;
                 return p.has(1) ? p[1] : Value::none();
             }},
            {"copy",
             [](const DictData& d, const CallArgs&) {
                 chargeEntries(d, 2 * sizeof(Value));
                 Value copy = Value::dict();
                 copy.mutableDict().assign(d.items);
                 return copy;
             }},
        },
        {},
    };
    return table;
}

// index and count: the positions of items equal to the argument.
Value listSearch(const std::vector<Value>& items, const CallArgs& args, const char* name, bool index) {
    Params p(name, args, {"value"});
    int64_t n = 0;
    for (size_t i = 0; i < items.size(); ++i) {
        if (!items[i].equals(p[0])) continue;
        if (index) return Value(int64_t(i));
        ++n;
    }
    if (index) raiseError(shortRepr(p[0]) + " is not in list");
    return Value(n);
}

const BuiltinTable<ListMethod>& listMethods() {
    static const BuiltinTable<ListMethod> table = {
        {
            {"index", [](const std::vector<Value>& l, const CallArgs& a) { return listSearch(l, a, "index", true); }},
            {"count", [](const std::vector<Value>& l, const CallArgs& a) { return listSearch(l, a, "count", false); }},
            {"copy", [](const std::vector<Value>& l, const CallArgs&) { return Value::list(l); }},
        },
        {},
    };
    return table;
}

// The mutating methods exist (so `x.append` is a method, as in Python) but the sandbox refuses the call.
const std::set<std::string> kDictMutators = {"pop", "popitem", "update", "setdefault", "clear"};
const std::set<std::string> kListMutators = {"append", "extend", "insert", "pop", "remove", "reverse", "sort", "clear"};

}  // namespace

std::string pyStrip(const std::string& s, const Value& chars, bool left, bool right) {
    auto cps = unicode::decode(s);
    std::u32string set = charsArg(chars);
    bool whitespace = !chars.isString();
    auto strip = [&](char32_t c) { return whitespace ? unicode::isSpace(c) : set.find(c) != std::u32string::npos; };
    size_t b = 0, e = cps.size();
    if (left)
        while (b < e && strip(cps[b])) ++b;
    if (right)
        while (e > b && strip(cps[e - 1])) --e;
    return unicode::encode(std::u32string_view(cps).substr(b, e - b));
}

std::vector<std::string> pySplit(const std::string& s, const Value& sep, int64_t maxSplit) {
    std::vector<std::string> out;
    if (sep.isString()) {
        const std::string& d = sep.asString();
        if (d.empty()) raiseError("empty separator");
        size_t start = 0;
        for (;;) {
            if (maxSplit >= 0 && int64_t(out.size()) >= maxSplit) break;
            chargeParts(out.size() + 1);
            size_t pos = s.find(d, start);
            if (pos == std::string::npos) break;
            out.push_back(s.substr(start, pos - start));
            start = pos + d.size();
        }
        out.push_back(s.substr(start));
        return out;
    }
    if (!sep.isNone() && !sep.isUndefined()) raiseError("must be str or None, not " + sep.typeName());
    auto cps = unicode::decode(s);
    size_t i = 0, n = cps.size();
    while (i < n) {
        chargeParts(out.size() + 1);
        while (i < n && unicode::isSpace(cps[i])) ++i;
        if (i >= n) break;
        if (maxSplit >= 0 && int64_t(out.size()) >= maxSplit) {
            size_t e = n;
            while (e > i && unicode::isSpace(cps[e - 1])) --e;
            out.push_back(unicode::encode(std::u32string_view(cps).substr(i, e - i)));
            break;
        }
        size_t j = i;
        while (j < n && !unicode::isSpace(cps[j])) ++j;
        out.push_back(unicode::encode(std::u32string_view(cps).substr(i, j - i)));
        i = j;
    }
    return out;
}

std::string pyReplace(const std::string& s, const std::string& from, const std::string& to, int64_t count) {
    std::string out;
    // Count the replacements first, so that the result is charged before it is built.
    workBytes(s.size());
    uint64_t n = 0;
    if (from.empty()) {
        n = unicode::length(s) + 1;
    } else {
        for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + from.size())) ++n;
    }
    if (count >= 0) n = std::min<uint64_t>(n, uint64_t(count));
    if (to.size() > from.size())
        ensureBytes(n > UINT64_MAX / 2 / (to.size() + 1) ? UINT64_MAX : s.size() + n * (to.size() - from.size()));
    workBytes(size_t(std::min<uint64_t>(n * to.size(), UINT64_MAX / 2)));
    if (from.empty()) {
        // Python inserts `to` between every code point (and at both ends).
        int64_t done = 0;
        auto cps = unicode::decode(s);
        for (char32_t c : cps) {
            if (count < 0 || done < count) {
                out += to;
                ++done;
            }
            unicode::append(out, c);
        }
        if (count < 0 || done < count) out += to;
        return out;
    }
    size_t start = 0;
    int64_t done = 0;
    for (;;) {
        size_t pos = (count >= 0 && done >= count) ? std::string::npos : s.find(from, start);
        if (pos == std::string::npos) break;
        out.append(s, start, pos - start);
        out += to;
        start = pos + from.size();
        ++done;
    }
    out.append(s, start, std::string::npos);
    return out;
}

bool isMethod(const Value& obj, const std::string& name) {
    switch (obj.kind()) {
    case Value::Kind::String: return stringMethods().find(name) != nullptr;
    case Value::Kind::Dict: return dictMethods().find(name) != nullptr || kDictMutators.count(name) > 0;
    case Value::Kind::List: return listMethods().find(name) != nullptr || kListMutators.count(name) > 0;
    default: return false;
    }
}

Value callMethod(const Value& obj, const std::string& name, CallArgs& args) {
    if (obj.isString()) {
        if (auto method = stringMethods().find(name)) {
            workBytes(obj.asString().size());
            return (*method)(obj.asString(), args);
        }
    } else if (obj.isDict()) {
        if (kDictMutators.count(name))
            raiseError("SecurityError: access to attribute '" + name + "' of 'dict' object is unsafe.");
        if (auto method = dictMethods().find(name)) {
            work(obj.asDict().items.size());
            return (*method)(obj.asDict(), args);
        }
    } else if (obj.isList()) {
        if (kListMutators.count(name))
            raiseError("SecurityError: access to attribute '" + name + "' of '" + obj.typeName() +
                       "' object is unsafe.");
        if (auto method = listMethods().find(name)) {
            work(obj.asList().items.size());
            return (*method)(obj.asList().items, args);
        }
    }
    raiseError("'" + obj.typeName() + "' object has no attribute '" + name + "'");
}

}  // namespace cairn::chat
