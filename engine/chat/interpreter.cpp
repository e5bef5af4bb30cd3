#include "interpreter.h"

#include "builtins.h"
#include "cairn/chat_template.h"

#include <chrono>

namespace cairn::chat {

Scope::~Scope() {
    for (auto& [name, v] : vars) sweep(v);
    finishSweep();
}

void Scope::set(const std::string& name, Value v) {
    auto it = vars.find(name);
    if (it != vars.end()) {
        it->second = std::move(v);
        return;
    }
    charge.add(kObjectBytes + name.size());
    vars.emplace(name, std::move(v));
}

namespace {

constexpr int kMaxCallDepth = 200;
// jinja2's sandbox refuses longer ranges (MAX_RANGE), so no real template relies on them.
constexpr int64_t kMaxRange = 100000;

using ScopePtr = std::shared_ptr<Scope>;

// A rendering buffer (the whole output, a macro's or a block's body), charged as it grows.
class Output {
public:
    void append(std::string_view s) {
        workBytes(s.size());
        charge_.add(s.size());
        text_ += s;
    }
    void appendValue(const Value& v) {
        if (v.isString()) append(v.asString());
        else if (!v.isUndefined()) append(v.str());
    }
    std::string take() {
        charge_.reset();
        return std::move(text_);
    }

private:
    std::string text_;
    Charge charge_;
};

// Python's len(range(start, stop, step)), without overflow.
int64_t rangeLength(int64_t start, int64_t stop, int64_t step) {
    __int128 span = step > 0 ? __int128(stop) - start : __int128(start) - stop;
    if (span <= 0) return 0;
    __int128 s = step > 0 ? __int128(step) : -__int128(step);
    __int128 n = (span + s - 1) / s;
    return n > INT64_MAX ? INT64_MAX : int64_t(n);
}

class Interpreter {
public:
    Interpreter(const RenderEnvironment& env) : env_(env) {
        globals_ = std::make_shared<Scope>();
        installGlobals();
        for (const auto& [k, v] : env.variables) globals_->set(k, v);
    }

    std::string run(const Program& program) {
        auto top = std::make_shared<Scope>();
        top->parent = globals_;
        Output out;
        struct BreakCycles {
            std::vector<std::weak_ptr<NamespaceData>>& created;
            // `{% set ns.self = ns %}` makes a reference cycle: empty every namespace at the end.
            ~BreakCycles() {
                for (auto& w : created)
                    if (auto ns = w.lock()) ns->attributes.clear();
            }
        } breakCycles{namespaces_};
        exec(program.body, out, top);
        return out.take();
    }

private:
    enum class Flow { Normal, Break, Continue };

    const RenderEnvironment& env_;
    ScopePtr globals_;
    int depth_ = 0;
    std::vector<Value> blockValues_;  // the rendered body seen by a filter block / block set
    std::vector<std::weak_ptr<NamespaceData>> namespaces_;  // the namespace()s made while rendering
    size_t namespacesPruneAt_ = 64;
    std::vector<Value> loopKeys_;  // the `loop` object's attribute names, made once per render

    const std::vector<Value>& loopKeys() {
        if (loopKeys_.empty())
            for (const char* k : {"index", "index0", "revindex", "revindex0", "first", "last", "length", "depth",
                                  "depth0", "previtem", "nextitem", "cycle"})
                loopKeys_.emplace_back(k);
        return loopKeys_;
    }

    struct DepthGuard {
        int& d;
        explicit DepthGuard(int& depth) : d(depth) {
            if (++d > kMaxCallDepth) raiseError("maximum recursion depth exceeded");
        }
        ~DepthGuard() { --d; }
    };

    static ScopePtr child(const ScopePtr& parent) {
        auto s = std::make_shared<Scope>();
        s->parent = parent;
        return s;
    }

    static Value lookup(const ScopePtr& scope, const std::string& name) {
        for (Scope* s = scope.get(); s; s = s->parent.get()) {
            auto it = s->vars.find(name);
            if (it != s->vars.end()) return it->second;
        }
        return Value::undefined("'" + name + "' is undefined");
    }

    void installGlobals() {
        auto& g = globals_->vars;
        g["range"] = Value::function("range", [](CallArgs& a) {
            if (!a.named.empty()) raiseError("range() takes no keyword arguments");
            if (a.positional.empty() || a.positional.size() > 3) raiseError("range expected 1 to 3 arguments");
            for (const auto& v : a.positional)
                if (!v.isInt() && !v.isBool())
                    raiseError("'" + v.typeName() + "' object cannot be interpreted as an integer");
            int64_t start = 0, stop, step = 1;
            if (a.positional.size() == 1) stop = a.positional[0].asInt();
            else {
                start = a.positional[0].asInt();
                stop = a.positional[1].asInt();
            }
            if (a.positional.size() == 3) step = a.positional[2].asInt();
            if (step == 0) raiseError("range() arg 3 must not be zero");
            int64_t n = rangeLength(start, stop, step);
            if (n > kMaxRange)
                raiseError("Range too big. The sandbox blocks ranges larger than MAX_RANGE (" +
                           std::to_string(kMaxRange) + ").");
            ensureBytes(uint64_t(n) * sizeof(Value));
            work(uint64_t(n));
            std::vector<Value> out;
            out.reserve(size_t(n));
            for (int64_t i = 0; i < n; ++i)
                out.emplace_back(int64_t(start + __int128(i) * step));  // within [start, stop)
            return Value::list(std::move(out));
        });
        g["dict"] = Value::function("dict", [](CallArgs& a) {
            Value d = Value::dict();
            if (!a.positional.empty()) {
                const Value& src = a.positional[0];
                if (src.isDict()) d.mutableDict().assign(src.asDict().items);
                else
                    for (const auto& pair : iterate(src)) {
                        auto kv = iterate(pair);
                        if (kv.size() != 2) raiseError("dictionary update sequence element has wrong length");
                        d.mutableDict().set(kv[0], kv[1]);
                    }
            }
            for (const auto& [k, v] : a.named) d.mutableDict().set(Value(k), v);
            return d;
        });
        g["namespace"] = Value::function("namespace", [this](CallArgs& a) {
            auto ns = std::make_shared<NamespaceData>();
            remember(ns);
            for (const auto& src : a.positional) {
                if (!src.isDict()) raiseError("namespace() positional argument must be a mapping");
                for (const auto& [k, v] : src.asDict().items) ns->attributes.set(k, v);
            }
            for (const auto& [k, v] : a.named) ns->attributes.set(Value(k), v);
            return Value(ns);
        });
        g["raise_exception"] = Value::function("raise_exception", [](CallArgs& a) -> Value {
            Params p("raise_exception", a, {"message"});
            raiseError(p[0].str());
        });
        g["strftime_now"] = Value::function("strftime_now", [this](CallArgs& a) {
            Params p("strftime_now", a, {"format"});
            std::tm now{};
            if (env_.clock) {
                now = env_.clock();
            } else {
                std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
                localtime_r(&t, &now);
            }
            return Value(formatTime(p[0].str(), now));
        });
        g["joiner"] = Value::function("joiner", [](CallArgs& a) {
            Params p("joiner", a, {"sep"});
            Value sep = p.has(0) ? Value(p[0].str()) : Value(", ");
            auto used = std::make_shared<bool>(false);
            return Value::function("joiner", [sep, used](CallArgs&) {
                if (!*used) {
                    *used = true;
                    return Value("");
                }
                return sep;
            });
        });
        g["cycler"] = Value::function("cycler", [](CallArgs& a) {
            auto ns = std::make_shared<NamespaceData>();
            ns->assignable = false;
            auto items = std::make_shared<std::vector<Value>>(a.positional);
            auto pos = std::make_shared<size_t>(0);
            ns->attributes.set(Value("next"), Value::function("next", [items, pos](CallArgs&) {
                                   if (items->empty()) return Value::none();
                                   Value v = (*items)[*pos % items->size()];
                                   ++*pos;
                                   return v;
                               }));
            return Value(ns);
        });
    }

    // The registry that breaks namespace cycles at the end: expired entries are dropped
    // as it grows, so it stays proportional to the namespaces alive.
    void remember(const std::shared_ptr<NamespaceData>& ns) {
        if (namespaces_.size() >= namespacesPruneAt_) {
            std::erase_if(namespaces_, [](const auto& w) { return w.expired(); });
            namespacesPruneAt_ = std::max<size_t>(64, namespaces_.size() * 2);
        }
        namespaces_.push_back(ns);
    }

    // ---- statements ----

    Flow exec(const Body& body, Output& out, const ScopePtr& scope) {
        for (const auto& stmt : body) {
            Flow f;
            try {
                work(1);
                f = execOne(*stmt, out, scope);
            } catch (const TemplateCancelled&) {
                throw;
            } catch (const TemplateError& e) {
                if (e.where() != "chat template") throw;
                throw TemplateError("chat template, line " + std::to_string(stmt->line), e.reason());
            }
            if (f != Flow::Normal) return f;
        }
        return Flow::Normal;
    }

    void assign(const std::vector<std::string>& names, const Value& v, Scope& scope) {
        if (names.size() == 1) {
            scope.set(names[0], v);
            return;
        }
        auto items = iterate(v);
        if (items.size() != names.size())
            raiseError("cannot unpack " + std::to_string(items.size()) + " values into " +
                       std::to_string(names.size()) + " names");
        for (size_t i = 0; i < names.size(); ++i) scope.set(names[i], items[i]);
    }

    Value applyBlockFilter(const Expr& filter, std::string text, const ScopePtr& scope) {
        blockValues_.push_back(Value(std::move(text)));
        struct Pop {
            std::vector<Value>& v;
            ~Pop() { v.pop_back(); }
        } pop{blockValues_};
        return eval(filter, scope);
    }

    Flow execOne(const Stmt& s, Output& out, const ScopePtr& scope) {
        switch (s.type) {
        case Stmt::Type::Text: out.append(s.text); return Flow::Normal;
        case Stmt::Type::Output: out.appendValue(eval(*s.expr, scope)); return Flow::Normal;
        case Stmt::Type::If:
            for (const auto& [cond, body] : s.branches)
                if (!cond || eval(*cond, scope).truthy()) return exec(body, out, scope);
            return Flow::Normal;
        case Stmt::Type::For: execFor(s, out, scope); return Flow::Normal;
        case Stmt::Type::Set: assign(s.names, eval(*s.expr, scope), *scope); return Flow::Normal;
        case Stmt::Type::SetAttribute: {
            Value target = eval(*s.target, scope);
            if (!target.isNamespace() || !target.asNamespace().assignable)
                raiseError("cannot assign attribute on non-namespace object");
            target.asNamespace().attributes.set(Value(s.text), eval(*s.expr, scope));
            return Flow::Normal;
        }
        case Stmt::Type::SetBlock: {
            Output text;
            DepthGuard guard(depth_);
            exec(s.body, text, child(scope));
            Value v = s.expr ? applyBlockFilter(*s.expr, text.take(), scope) : Value(text.take());
            scope->set(s.names[0], v);
            return Flow::Normal;
        }
        case Stmt::Type::Macro: scope->set(s.text, makeMacro(s.text, s.params, s.body, scope)); return Flow::Normal;
        case Stmt::Type::CallBlock: {
            Value caller = makeMacro("caller", s.params, s.body, scope, true);
            out.appendValue(evalCall(*s.expr, scope, &caller));
            return Flow::Normal;
        }
        case Stmt::Type::FilterBlock: {
            Output text;
            DepthGuard guard(depth_);
            exec(s.body, text, child(scope));
            out.appendValue(applyBlockFilter(*s.expr, text.take(), scope));
            return Flow::Normal;
        }
        case Stmt::Type::Break: return Flow::Break;
        case Stmt::Type::Continue: return Flow::Continue;
        case Stmt::Type::Scope: {
            DepthGuard guard(depth_);
            auto inner = child(scope);
            for (const auto& p : s.params) inner->set(p.name, eval(*p.defaultValue, scope));
            return exec(s.body, out, inner);
        }
        }
        return Flow::Normal;
    }

    void execFor(const Stmt& s, Output& out, const ScopePtr& scope) {
        std::vector<Value> items = iterate(eval(*s.expr, scope));
        if (s.condition) {
            std::vector<Value> kept;
            for (auto& item : items) {
                work(1);
                auto filterScope = child(scope);
                assign(s.names, item, *filterScope);
                if (eval(*s.condition, filterScope).truthy()) kept.push_back(std::move(item));
            }
            items = std::move(kept);
        }
        DepthGuard guard(depth_);
        if (items.empty()) {
            exec(s.elseBody, out, child(scope));
            return;
        }
        int64_t n = int64_t(items.size());
        for (int64_t i = 0; i < n; ++i) {
            work(kLoopIterationSteps);
            auto iterScope = child(scope);
            assign(s.names, items[size_t(i)], *iterScope);
            auto loop = std::make_shared<NamespaceData>();
            loop->assignable = false;
            std::vector<std::pair<Value, Value>> a;
            a.reserve(12);
            const auto& k = loopKeys();
            a.emplace_back(k[0], Value(i + 1));
            a.emplace_back(k[1], Value(i));
            a.emplace_back(k[2], Value(n - i));
            a.emplace_back(k[3], Value(n - i - 1));
            a.emplace_back(k[4], Value(i == 0));
            a.emplace_back(k[5], Value(i == n - 1));
            a.emplace_back(k[6], Value(n));
            a.emplace_back(k[7], Value(int64_t(1)));
            a.emplace_back(k[8], Value(int64_t(0)));
            a.emplace_back(k[9], i > 0 ? items[size_t(i - 1)] : Value::undefined("there is no previous item"));
            a.emplace_back(k[10], i + 1 < n ? items[size_t(i + 1)] : Value::undefined("there is no next item"));
            a.emplace_back(k[11], Value::function("cycle", [i](CallArgs& args) {
                               if (args.positional.empty()) raiseError("no items for cycling given");
                               return args.positional[size_t(i) % args.positional.size()];
                           }));
            loop->attributes.assign(std::move(a));
            iterScope->set("loop", Value(loop));
            if (exec(s.body, out, iterScope) == Flow::Break) break;
        }
    }

    Value makeMacro(const std::string& name, const std::vector<MacroParam>& params, const Body& body,
                    const ScopePtr& scope, bool strongClosure = false) {
        // A macro stored in the scope it closes over would keep that scope alive forever:
        // hold it weakly (the defining scope outlives every call made while rendering).
        std::weak_ptr<Scope> weak = scope;
        ScopePtr strong = strongClosure ? scope : nullptr;
        return Value::function(name, [this, name, &params, &body, weak, strong](CallArgs& args) {
            ScopePtr closure = strong ? strong : weak.lock();
            if (!closure) closure = globals_;
            return callMacro(name, params, body, closure, args);
        });
    }

    Value callMacro(const std::string& name, const std::vector<MacroParam>& params, const Body& body,
                    const ScopePtr& closure, CallArgs& args) {
        DepthGuard guard(depth_);
        auto scope = child(closure);
        std::vector<Value> varargs;
        for (size_t i = 0; i < args.positional.size(); ++i) {
            if (i < params.size()) scope->set(params[i].name, args.positional[i]);
            else varargs.push_back(args.positional[i]);
        }
        Value kwargs = Value::dict();
        for (const auto& [k, v] : args.named) {
            bool isParam = false;
            for (size_t i = 0; i < params.size(); ++i) {
                if (params[i].name != k) continue;
                if (i < args.positional.size())
                    raiseError("macro '" + name + "' got multiple values for argument '" + k + "'");
                isParam = true;
            }
            if (isParam || k == "caller") scope->set(k, v);
            else kwargs.mutableDict().set(Value(k), v);
        }
        for (size_t i = args.positional.size(); i < params.size(); ++i) {
            if (scope->vars.count(params[i].name)) continue;
            scope->set(params[i].name,
                       params[i].defaultValue
                           ? eval(*params[i].defaultValue, scope)
                           : Value::undefined("parameter '" + params[i].name + "' was not provided"));
        }
        scope->set("varargs", Value::list(std::move(varargs)));
        scope->set("kwargs", kwargs);
        Output out;
        exec(body, out, scope);
        return Value(out.take());
    }

    // ---- expressions ----

    CallArgs evalArgs(const Expr& e, const ScopePtr& scope) {
        CallArgs args;
        for (const auto& a : e.args) args.positional.push_back(eval(*a, scope));
        for (const auto& [k, v] : e.kwargs) args.named.emplace_back(k, eval(*v, scope));
        return args;
    }

    Value evalCall(const Expr& e, const ScopePtr& scope, const Value* caller = nullptr) {
        CallArgs args = evalArgs(e, scope);
        if (caller) args.named.emplace_back("caller", *caller);
        const Expr& callee = *e.a;
        if (callee.type == Expr::Type::Attribute) {
            Value obj = eval(*callee.a, scope);
            if (isMethod(obj, callee.name)) return callMethod(obj, callee.name, args);
            return callValue(getAttribute(obj, callee.name), args);
        }
        return callValue(eval(callee, scope), args);
    }

    static bool compare(const std::string& op, const Value& l, const Value& r) {
        if (op == "==") return l.equals(r);
        if (op == "!=") return !l.equals(r);
        if (op == "in") return contains(r, l);
        if (op == "notin") return !contains(r, l);
        if (l.isUndefined()) raiseUndefined(l);
        if (r.isUndefined()) raiseUndefined(r);
        int c = compareValues(l, r);
        if (op == "<") return c < 0;
        if (op == "<=") return c <= 0;
        if (op == ">") return c > 0;
        return c >= 0;
    }

    Value eval(const Expr& e, const ScopePtr& scope) {
        work(1);
        Budget::Depth depth;
        switch (e.type) {
        case Expr::Type::Literal: return e.value;
        case Expr::Type::Name: return lookup(scope, e.name);
        case Expr::Type::List:
        case Expr::Type::Tuple: {
            std::vector<Value> items;
            items.reserve(e.args.size());
            for (const auto& a : e.args) items.push_back(eval(*a, scope));
            return Value::list(std::move(items), e.type == Expr::Type::Tuple);
        }
        case Expr::Type::Dict: {
            Value d = Value::dict();
            for (size_t i = 0; i + 1 < e.args.size(); i += 2)
                d.mutableDict().set(eval(*e.args[i], scope), eval(*e.args[i + 1], scope));
            return d;
        }
        case Expr::Type::Attribute: return getAttribute(eval(*e.a, scope), e.name);
        case Expr::Type::Item: {
            Value obj = eval(*e.a, scope);
            return getItem(obj, eval(*e.b, scope));
        }
        case Expr::Type::Slice: {
            Value obj = eval(*e.a, scope);
            Value start = e.b ? eval(*e.b, scope) : Value::none();
            Value stop = e.c ? eval(*e.c, scope) : Value::none();
            Value step = e.d ? eval(*e.d, scope) : Value::none();
            return getSlice(obj, start, stop, step);
        }
        case Expr::Type::Call: {
            DepthGuard guard(depth_);
            return evalCall(e, scope);
        }
        case Expr::Type::Filter: {
            Value input = eval(*e.a, scope);
            CallArgs args = evalArgs(e, scope);
            return applyFilter(e.name, input, args);
        }
        case Expr::Type::Test: {
            Value input = eval(*e.a, scope);
            CallArgs args = evalArgs(e, scope);
            return Value(applyTest(e.name, input, args) != e.negate);
        }
        case Expr::Type::Unary: {
            Value v = eval(*e.a, scope);
            if (e.name == "not") return Value(!v.truthy());
            if (e.name == "-") return negate(v);
            if (v.isUndefined()) raiseUndefined(v);
            if (!v.isNumber()) raiseError("bad operand type for unary +: '" + v.typeName() + "'");
            return v.isBool() ? Value(v.asInt()) : v;
        }
        case Expr::Type::Binary: {
            Value l = eval(*e.a, scope);
            if (e.name == "and") return l.truthy() ? eval(*e.b, scope) : l;
            if (e.name == "or") return l.truthy() ? l : eval(*e.b, scope);
            return binaryOp(e.name, l, eval(*e.b, scope));
        }
        case Expr::Type::Compare: {
            Value l = eval(*e.a, scope);
            for (size_t i = 0; i < e.ops.size(); ++i) {
                Value r = eval(*e.args[i], scope);
                if (!compare(e.ops[i], l, r)) return Value(false);
                l = std::move(r);
            }
            return Value(true);
        }
        case Expr::Type::Conditional:
            if (eval(*e.a, scope).truthy()) return eval(*e.b, scope);
            return e.c
                ? eval(*e.c, scope)
                : Value::undefined("the inline if-expression evaluated to false and no else section was defined");
        case Expr::Type::BlockValue: return blockValues_.empty() ? Value("") : blockValues_.back();
        }
        return Value();
    }
};

}  // namespace

std::string renderProgram(const Program& program, const RenderEnvironment& environment) {
    Budget budget(environment.limits, environment.cancel);
    struct Report {
        const Budget& budget;
        ChatRenderStats* stats;
        ~Report() {
            if (stats) *stats = budget.stats();
        }
    } report{budget, environment.stats};
    Budget::Active active(budget);
    Interpreter interpreter(environment);
    return interpreter.run(program);
}

}  // namespace cairn::chat
