#include "parser.h"

#include "cairn/error.h"

#include <cstdlib>
#include <set>

namespace cairn::chat {
namespace {

using T = Token::Type;

class Parser {
public:
    explicit Parser(const std::vector<Token>& tokens) : t_(tokens) {}

    Program program() {
        Program p;
        std::string end = parseBody(p.body, {});
        if (!end.empty()) fail(peek(), "unexpected '" + end + "'");
        return p;
    }

private:
    const std::vector<Token>& t_;
    size_t i_ = 0;
    int depth_ = 0;

    const Token& peek(size_t ahead = 0) const { return t_[std::min(i_ + ahead, t_.size() - 1)]; }
    const Token& next() {
        const Token& t = t_[i_];
        if (i_ + 1 < t_.size()) ++i_;
        return t;
    }

    [[noreturn]] void fail(const Token& at, const std::string& what) const {
        throw Error("chat template",
                    "line " + std::to_string(at.line) + ", column " + std::to_string(at.column) + ": " + what);
    }

    bool isOp(const char* op, size_t ahead = 0) const {
        return peek(ahead).type == T::Operator && peek(ahead).text == op;
    }
    bool isName(const char* name, size_t ahead = 0) const {
        return peek(ahead).type == T::Name && peek(ahead).text == name;
    }
    bool acceptOp(const char* op) {
        if (isOp(op)) {
            next();
            return true;
        }
        return false;
    }
    bool acceptName(const char* name) {
        if (isName(name)) {
            next();
            return true;
        }
        return false;
    }

    void expectOp(const char* op) {
        if (!acceptOp(op)) fail(peek(), std::string("expected '") + op + "'" + found());
    }
    std::string expectName() {
        if (peek().type != T::Name) fail(peek(), "expected a name" + found());
        return next().text;
    }
    void expectBlockEnd() {
        if (peek().type != T::BlockEnd) fail(peek(), "expected end of statement block" + found());
        next();
    }
    std::string found() const {
        const Token& t = peek();
        switch (t.type) {
        case T::End: return ", found end of template";
        case T::BlockEnd: return ", found '%}'";
        case T::VariableEnd: return ", found '}}'";
        case T::Text: return ", found text";
        default: return ", found '" + t.text + "'";
        }
    }

    static std::string oneOf(const std::set<std::string>& words) {
        std::string out;
        for (const auto& w : words) out += (out.empty() ? "'" : " or '") + w + "'";
        return out;
    }

    ExprPtr node(Expr::Type type, int line) {
        auto e = std::make_unique<Expr>();
        e->type = type;
        e->line = line;
        return e;
    }

    // Every construct counts against one nesting limit, so that neither this parser nor
    // the evaluator and the tree's destructor recurse deeper than kMaxNesting levels.
    static constexpr int kMaxNesting = 200;

    struct DepthGuard {
        int& d;
        DepthGuard(int& depth, const Parser& p) : d(depth) {
            if (++d > kMaxNesting)
                p.fail(p.peek(), "template nested too deeply (more than " + std::to_string(kMaxNesting) + " levels)");
        }
        ~DepthGuard() { --d; }
    };

    // A chain parsed in a loop (a + b + c, a.b.c, a|f|g, ...) builds a tree one level deeper
    // per link: each link counts as a level until the chain ends.
    class ChainGuard {
    public:
        explicit ChainGuard(Parser& p) : p_(p) {}
        ~ChainGuard() { p_.depth_ -= links_; }
        void link() {
            ++links_;
            if (++p_.depth_ > kMaxNesting)
                p_.fail(p_.peek(),
                        "expression chain nested too deeply (more than " + std::to_string(kMaxNesting) + " levels)");
        }

    private:
        Parser& p_;
        int links_ = 0;
    };

    // Parses statements until a block whose keyword is in `ends`; returns that keyword
    // (its `{%` and keyword consumed) or "" at the end of the template.
    std::string parseBody(Body& body, const std::set<std::string>& ends) {
        DepthGuard guard(depth_, *this);
        for (;;) {
            const Token& t = peek();
            if (t.type == T::End) {
                if (!ends.empty()) fail(t, "unexpected end of template, expected " + oneOf(ends));
                return "";
            }
            if (t.type == T::Text) {
                auto s = std::make_unique<Stmt>();
                s->type = Stmt::Type::Text;
                s->line = t.line;
                s->text = next().text;
                body.push_back(std::move(s));
            } else if (t.type == T::VariableBegin) {
                next();
                auto s = std::make_unique<Stmt>();
                s->type = Stmt::Type::Output;
                s->line = t.line;
                s->expr = parseTuple(true);
                if (peek().type != T::VariableEnd) fail(peek(), "expected '}}'" + found());
                next();
                body.push_back(std::move(s));
            } else if (t.type == T::BlockBegin) {
                next();
                const Token& kw = peek();
                if (kw.type != T::Name) fail(kw, "expected a statement name" + found());
                if (ends.count(kw.text)) {
                    next();
                    return kw.text;
                }
                static const std::set<std::string> kEndWords = {"elif",          "else",     "endif",   "endfor",
                                                                "endset",        "endmacro", "endcall", "endfilter",
                                                                "endgeneration", "endraw",   "endwith"};
                if (kEndWords.count(kw.text))
                    fail(t,
                         "unexpected '" + kw.text + "'" + (ends.empty() ? std::string() : ", expected " + oneOf(ends)));
                body.push_back(parseStatement());
            } else {
                fail(t, "unexpected token" + found());
            }
        }
    }

    StmtPtr parseStatement() {
        const Token& kw = next();
        auto s = std::make_unique<Stmt>();
        s->line = kw.line;
        const std::string& k = kw.text;
        if (k == "if") return parseIf(std::move(s));
        if (k == "for") return parseFor(std::move(s));
        if (k == "set") return parseSet(std::move(s));
        if (k == "macro") return parseMacro(std::move(s));
        if (k == "call") return parseCallBlock(std::move(s));
        if (k == "filter") {
            s->type = Stmt::Type::FilterBlock;
            s->expr = parseFilterChain(node(Expr::Type::BlockValue, kw.line));
            expectBlockEnd();
            parseBody(s->body, {"endfilter"});
            expectBlockEnd();
            return s;
        }
        if (k == "break" || k == "continue") {
            s->type = k == "break" ? Stmt::Type::Break : Stmt::Type::Continue;
            expectBlockEnd();
            return s;
        }
        if (k == "with") {
            // {% with a = 1, b = x %}...{% endwith %}: a scope with its own variables.
            s->type = Stmt::Type::Scope;
            while (peek().type == T::Name) {
                MacroParam p;
                p.name = next().text;
                expectOp("=");
                p.defaultValue = parseExpression(true);
                s->params.push_back(std::move(p));
                if (!acceptOp(",")) break;
            }
            expectBlockEnd();
            parseBody(s->body, {"endwith"});
            expectBlockEnd();
            return s;
        }
        if (k == "generation") {
            s->type = Stmt::Type::Scope;
            expectBlockEnd();
            parseBody(s->body, {"endgeneration"});
            expectBlockEnd();
            return s;
        }
        fail(kw, "unknown statement '" + k + "'");
    }

    StmtPtr parseIf(StmtPtr s) {
        s->type = Stmt::Type::If;
        ExprPtr cond = parseTuple(false);
        expectBlockEnd();
        for (;;) {
            Body body;
            std::string end = parseBody(body, {"elif", "else", "endif"});
            s->branches.emplace_back(std::move(cond), std::move(body));
            if (end == "elif") {
                cond = parseTuple(false);
                expectBlockEnd();
            } else if (end == "else") {
                expectBlockEnd();
                Body elseBody;
                parseBody(elseBody, {"endif"});
                expectBlockEnd();
                s->branches.emplace_back(nullptr, std::move(elseBody));
                return s;
            } else {
                expectBlockEnd();
                return s;
            }
        }
    }

    std::vector<std::string> parseTargets() {
        std::vector<std::string> names;
        bool paren = acceptOp("(");
        names.push_back(expectName());
        while (acceptOp(",")) {
            if (peek().type != T::Name || isName("in")) break;
            names.push_back(expectName());
        }
        if (paren) expectOp(")");
        return names;
    }

    StmtPtr parseFor(StmtPtr s) {
        s->type = Stmt::Type::For;
        s->names = parseTargets();
        if (!acceptName("in")) fail(peek(), "expected 'in'" + found());
        s->expr = parseTuple(false, true);
        if (acceptName("if")) s->condition = parseExpression(true);
        if (acceptName("recursive")) fail(peek(), "recursive loops are not supported");
        expectBlockEnd();
        std::string end = parseBody(s->body, {"else", "endfor"});
        expectBlockEnd();
        if (end == "else") {
            parseBody(s->elseBody, {"endfor"});
            expectBlockEnd();
        }
        return s;
    }

    StmtPtr parseSet(StmtPtr s) {
        if (peek().type == T::Name && isOp(".", 1)) {
            s->type = Stmt::Type::SetAttribute;
            auto obj = node(Expr::Type::Name, peek().line);
            obj->name = next().text;
            next();
            s->target = std::move(obj);
            s->text = expectName();
            expectOp("=");
            s->expr = parseTuple(true);
            expectBlockEnd();
            return s;
        }
        s->names = parseTargets();
        if (acceptOp("=")) {
            s->type = Stmt::Type::Set;
            s->expr = parseTuple(true);
            expectBlockEnd();
            return s;
        }
        if (s->names.size() != 1) fail(peek(), "a block set assigns one name");
        s->type = Stmt::Type::SetBlock;
        if (isOp("|")) s->expr = parseFilterChain(node(Expr::Type::BlockValue, s->line));
        expectBlockEnd();
        parseBody(s->body, {"endset"});
        expectBlockEnd();
        return s;
    }

    void parseParams(std::vector<MacroParam>& params) {
        expectOp("(");
        while (!isOp(")")) {
            if (!params.empty()) expectOp(",");
            if (isOp(")")) break;
            MacroParam p;
            p.name = expectName();
            if (acceptOp("=")) p.defaultValue = parseExpression(true);
            params.push_back(std::move(p));
        }
        expectOp(")");
    }

    StmtPtr parseMacro(StmtPtr s) {
        s->type = Stmt::Type::Macro;
        s->text = expectName();
        parseParams(s->params);
        expectBlockEnd();
        parseBody(s->body, {"endmacro"});
        if (peek().type == T::Name) next();  // {% endmacro name %}
        expectBlockEnd();
        return s;
    }

    StmtPtr parseCallBlock(StmtPtr s) {
        s->type = Stmt::Type::CallBlock;
        if (isOp("(")) parseParams(s->params);
        s->expr = parseExpression(true);
        if (s->expr->type != Expr::Type::Call) fail(peek(), "expected a call after 'call'");
        expectBlockEnd();
        parseBody(s->body, {"endcall"});
        expectBlockEnd();
        return s;
    }

    // `| name(args) | name ...` applied to `input` (filter blocks, block sets).
    ExprPtr parseFilterChain(ExprPtr input) {
        acceptOp("|");
        ChainGuard chain(*this);
        ExprPtr e = parseFilter(std::move(input));
        while (acceptOp("|")) {
            chain.link();
            e = parseFilter(std::move(e));
        }
        return e;
    }

    // ---- expressions ----

    bool atTupleEnd() const {
        const Token& t = peek();
        if (t.type == T::VariableEnd || t.type == T::BlockEnd || t.type == T::End) return true;
        if (t.type == T::Operator && (t.text == ")" || t.text == "]" || t.text == "}" || t.text == "=")) return true;
        return t.type == T::Name && (t.text == "if" || t.text == "recursive" || t.text == "in");
    }

    ExprPtr parseTuple(bool withCond, bool forIterable = false) {
        int line = peek().line;
        std::vector<ExprPtr> items;
        bool comma = false;
        for (;;) {
            if (!items.empty()) {
                if (!acceptOp(",")) break;
                comma = true;
                if (atTupleEnd()) break;
            }
            items.push_back(parseExpression(withCond));
            if (forIterable && isName("if")) break;
        }
        if (!comma) return std::move(items[0]);
        auto e = node(Expr::Type::Tuple, line);
        e->args = std::move(items);
        return e;
    }

    ExprPtr parseExpression(bool withCond) {
        DepthGuard guard(depth_, *this);
        return withCond ? parseConditional() : parseOr();
    }

    ExprPtr parseConditional() {
        ExprPtr e = parseOr();
        ChainGuard chain(*this);
        while (isName("if")) {
            chain.link();
            int line = next().line;
            auto c = node(Expr::Type::Conditional, line);
            c->a = parseOr();
            c->b = std::move(e);
            if (acceptName("else")) c->c = parseConditional();
            e = std::move(c);
        }
        return e;
    }

    ExprPtr binary(const std::string& op, ExprPtr l, ExprPtr r, int line) {
        auto e = node(Expr::Type::Binary, line);
        e->name = op;
        e->a = std::move(l);
        e->b = std::move(r);
        return e;
    }

    ExprPtr parseOr() {
        ExprPtr e = parseAnd();
        ChainGuard chain(*this);
        while (isName("or")) {
            chain.link();
            int line = next().line;
            e = binary("or", std::move(e), parseAnd(), line);
        }
        return e;
    }

    ExprPtr parseAnd() {
        ExprPtr e = parseNot();
        ChainGuard chain(*this);
        while (isName("and")) {
            chain.link();
            int line = next().line;
            e = binary("and", std::move(e), parseNot(), line);
        }
        return e;
    }

    ExprPtr parseNot() {
        if (isName("not")) {
            int line = next().line;
            DepthGuard guard(depth_, *this);
            auto e = node(Expr::Type::Unary, line);
            e->name = "not";
            e->a = parseNot();
            return e;
        }
        return parseCompare();
    }

    ExprPtr parseCompare() {
        int line = peek().line;
        ExprPtr first = parseMath1();
        ExprPtr cmp;
        for (;;) {
            std::string op;
            const Token& t = peek();
            if (t.type == T::Operator &&
                (t.text == "==" || t.text == "!=" || t.text == "<" || t.text == "<=" || t.text == ">" ||
                 t.text == ">=")) {
                op = t.text;
                next();
            } else if (isName("in")) {
                op = "in";
                next();
            } else if (isName("not") && isName("in", 1)) {
                op = "notin";
                next();
                next();
            } else {
                break;
            }
            if (!cmp) {
                cmp = node(Expr::Type::Compare, line);
                cmp->a = std::move(first);
            }
            cmp->ops.push_back(op);
            cmp->args.push_back(parseMath1());
        }
        return cmp ? std::move(cmp) : std::move(first);
    }

    ExprPtr parseMath1() {
        ExprPtr e = parseConcat();
        ChainGuard chain(*this);
        while (isOp("+") || isOp("-")) {
            chain.link();
            const Token& t = next();
            e = binary(t.text, std::move(e), parseConcat(), t.line);
        }
        return e;
    }

    ExprPtr parseConcat() {
        ExprPtr e = parseMath2();
        ChainGuard chain(*this);
        while (isOp("~")) {
            chain.link();
            int line = next().line;
            e = binary("~", std::move(e), parseMath2(), line);
        }
        return e;
    }

    ExprPtr parseMath2() {
        ExprPtr e = parsePow();
        ChainGuard chain(*this);
        while (isOp("*") || isOp("/") || isOp("//") || isOp("%")) {
            chain.link();
            const Token& t = next();
            e = binary(t.text, std::move(e), parsePow(), t.line);
        }
        return e;
    }

    ExprPtr parsePow() {
        ExprPtr e = parseUnary(true);
        ChainGuard chain(*this);
        while (isOp("**")) {
            chain.link();
            int line = next().line;
            e = binary("**", std::move(e), parseUnary(true), line);
        }
        return e;
    }

    ExprPtr parseUnary(bool withFilter) {
        DepthGuard guard(depth_, *this);
        ExprPtr e;
        if (isOp("-") || isOp("+")) {
            const Token& t = next();
            e = node(Expr::Type::Unary, t.line);
            e->name = t.text;
            e->a = parseUnary(false);
        } else {
            e = parsePrimary();
        }
        e = parsePostfix(std::move(e));
        if (withFilter) e = parseFilterExpr(std::move(e));
        return e;
    }

    ExprPtr parsePrimary() {
        const Token& t = peek();
        int line = t.line;
        switch (t.type) {
        case T::Name: {
            next();
            auto e = node(Expr::Type::Literal, line);
            if (t.text == "true" || t.text == "True") e->value = Value(true);
            else if (t.text == "false" || t.text == "False") e->value = Value(false);
            else if (t.text == "none" || t.text == "None") e->value = Value::none();
            else {
                e->type = Expr::Type::Name;
                e->name = t.text;
            }
            return e;
        }
        case T::String: {
            std::string s;
            while (peek().type == T::String) s += next().text;
            auto e = node(Expr::Type::Literal, line);
            e->value = Value(std::move(s));
            return e;
        }
        case T::Integer: {
            next();
            auto e = node(Expr::Type::Literal, line);
            errno = 0;
            long long v = std::strtoll(t.text.c_str(), nullptr, 10);
            if (errno == ERANGE) fail(t, "integer literal out of range");
            e->value = Value(int64_t(v));
            return e;
        }
        case T::Float: {
            next();
            auto e = node(Expr::Type::Literal, line);
            e->value = Value(std::strtod(t.text.c_str(), nullptr));
            return e;
        }
        case T::Operator:
            if (t.text == "(") {
                next();
                if (acceptOp(")")) {
                    auto e = node(Expr::Type::Tuple, line);
                    return e;
                }
                ExprPtr e = parseTuple(true);
                expectOp(")");
                return e;
            }
            if (t.text == "[") {
                next();
                auto e = node(Expr::Type::List, line);
                while (!isOp("]")) {
                    if (!e->args.empty()) {
                        expectOp(",");
                        if (isOp("]")) break;
                    }
                    e->args.push_back(parseExpression(true));
                }
                expectOp("]");
                return e;
            }
            if (t.text == "{") {
                next();
                auto e = node(Expr::Type::Dict, line);
                while (!isOp("}")) {
                    if (!e->args.empty()) {
                        expectOp(",");
                        if (isOp("}")) break;
                    }
                    e->args.push_back(parseExpression(true));
                    expectOp(":");
                    e->args.push_back(parseExpression(true));
                }
                expectOp("}");
                return e;
            }
            break;
        default: break;
        }
        fail(t, "unexpected" + found().substr(std::string(", found").size()));
    }

    ExprPtr parsePostfix(ExprPtr e) {
        ChainGuard chain(*this);
        for (;;) {
            if (isOp(".") || isOp("[") || isOp("(")) chain.link();
            if (isOp(".")) {
                int line = next().line;
                if (peek().type == T::Integer) {
                    auto item = node(Expr::Type::Item, line);
                    item->a = std::move(e);
                    item->b = node(Expr::Type::Literal, line);
                    item->b->value = Value(int64_t(std::strtoll(next().text.c_str(), nullptr, 10)));
                    e = std::move(item);
                } else {
                    auto attr = node(Expr::Type::Attribute, line);
                    attr->a = std::move(e);
                    attr->name = expectName();
                    e = std::move(attr);
                }
            } else if (isOp("[")) {
                int line = next().line;
                e = parseSubscript(std::move(e), line);
            } else if (isOp("(")) {
                e = parseCall(std::move(e));
            } else {
                return e;
            }
        }
    }

    ExprPtr parseSubscript(ExprPtr obj, int line) {
        ExprPtr parts[3];
        int colons = 0;
        for (;;) {
            if (isOp("]")) break;
            if (isOp(":")) {
                next();
                if (++colons > 2) fail(peek(), "too many ':' in slice");
                continue;
            }
            if (parts[colons]) fail(peek(), "expected ']'" + found());
            parts[colons] = parseExpression(true);
        }
        expectOp("]");
        if (colons == 0) {
            if (!parts[0]) fail(peek(), "empty subscript");
            auto e = node(Expr::Type::Item, line);
            e->a = std::move(obj);
            e->b = std::move(parts[0]);
            return e;
        }
        auto e = node(Expr::Type::Slice, line);
        e->a = std::move(obj);
        e->b = std::move(parts[0]);
        e->c = std::move(parts[1]);
        e->d = std::move(parts[2]);
        return e;
    }

    void parseArgs(Expr& e) {
        expectOp("(");
        bool first = true;
        while (!isOp(")")) {
            if (!first) {
                expectOp(",");
                if (isOp(")")) break;
            }
            first = false;
            if (peek().type == T::Name && isOp("=", 1)) {
                std::string name = next().text;
                next();
                e.kwargs.emplace_back(name, parseExpression(true));
            } else {
                if (!e.kwargs.empty()) fail(peek(), "positional argument after keyword argument");
                e.args.push_back(parseExpression(true));
            }
        }
        expectOp(")");
    }

    ExprPtr parseCall(ExprPtr callee) {
        auto e = node(Expr::Type::Call, peek().line);
        e->a = std::move(callee);
        parseArgs(*e);
        return e;
    }

    ExprPtr parseFilter(ExprPtr input) {
        auto e = node(Expr::Type::Filter, peek().line);
        e->name = expectName();
        while (isOp(".") && peek(1).type == T::Name) {
            next();
            e->name += "." + next().text;
        }
        e->a = std::move(input);
        if (isOp("(")) parseArgs(*e);
        return e;
    }

    ExprPtr parseFilterExpr(ExprPtr e) {
        ChainGuard chain(*this);
        for (;;) {
            if (isOp("|") || isName("is") || isOp("(")) chain.link();
            if (isOp("|")) {
                next();
                e = parseFilter(std::move(e));
            } else if (isName("is")) {
                int line = next().line;
                auto t = node(Expr::Type::Test, line);
                t->negate = acceptName("not");
                t->name = expectName();
                while (isOp(".") && peek(1).type == T::Name) {
                    next();
                    t->name += "." + next().text;
                }
                t->a = std::move(e);
                const Token& n = peek();
                if (isOp("(")) {
                    parseArgs(*t);
                } else if ((n.type == T::Name || n.type == T::String || n.type == T::Integer || n.type == T::Float ||
                            isOp("[") || isOp("{")) &&
                           !isName("else") && !isName("or") && !isName("and")) {
                    if (isName("is")) fail(n, "you cannot chain multiple tests with is");
                    t->args.push_back(parsePostfix(parsePrimary()));
                }
                e = std::move(t);
            } else if (isOp("(")) {
                e = parseCall(std::move(e));
            } else {
                return e;
            }
        }
    }
};

}  // namespace

Program parse(const std::vector<Token>& tokens) { return Parser(tokens).program(); }

}  // namespace cairn::chat
